package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.observe.Observer;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineRejection;
import io.kvguard.probe.PdRouterProbe;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.probe.RouterAddress;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionOutcome;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Probe bookkeeping, in one part: the two schedulers (pool probes and rejection probes), what each
 * policy asks with (its credentials and CA bundle), the probes a pass requests and the results it
 * used. A pass enters it twice: once for what is known ({@link #known}), once to send what its
 * assessments want and let go of the rest ({@link #settle}).
 */
final class ProbeBook implements AutoCloseable {
  private final ProbeScheduler<ProbeOutcome> probes;
  private final ProbeScheduler<RejectionOutcome> rejections;
  private final EngineProbes engines;
  private final RejectionProbe rejectionProbe;
  private final PdRouterProbe routerProbe;
  private final RouterAddress routerAddress;
  private final RouterServices routerServices;

  /** Each policy's last passing proof through its router (memory only: RouterProofs). */
  private final java.util.concurrent.ConcurrentMap<ResourceID, RouterProofs.Passed> passedProofs =
      new java.util.concurrent.ConcurrentHashMap<>();

  private final ProbeCredentials credentials;
  private final ProbeTrust trust;
  private final Observer observer;
  private final Targets targets;

  /** Whether a queued probe may still be sent: asked just before it is, from the informer cache. */
  @FunctionalInterface
  interface Targets {
    /**
     * Why the pod must not be probed at {@code podIP} any more (gone, recreated, re-addressed,
     * deselected); empty: go.
     */
    Optional<String> whyNotProbe(String namespace, String name, String uid, String podIP);
  }

  /**
   * {@code changed}: told (on a probe thread) for each policy whose answer changed, so it gets a
   * pass.
   */
  ProbeBook(
      ProbeLimits limits,
      Clock clock,
      EngineProbes engines,
      RejectionProbe rejectionProbe,
      PdRouterProbe routerProbe,
      RouterAddress routerAddress,
      RouterServices routerServices,
      ProbeCredentials credentials,
      ProbeTrust trust,
      Observer observer,
      Targets targets,
      Consumer<ResourceID> changed) {
    this.probes =
        new ProbeScheduler<>(
            new TenantFairExecutor(
                "kvguard-probe",
                limits.concurrency(),
                Math.min(limits.concurrency(), limits.concurrencyPerNamespace()),
                limits.hung(),
                observer::hungProbes,
                true),
            clock,
            ProbeOutcome::failed,
            changed);
    this.rejections =
        new ProbeScheduler<>(
            rejectionExecutor(limits, observer::hungRejectionProbes),
            clock,
            RejectionOutcome.Failed::new,
            changed);
    this.engines = engines;
    this.rejectionProbe = rejectionProbe;
    this.routerProbe = routerProbe;
    this.routerAddress = routerAddress;
    this.routerServices = routerServices;
    this.credentials = credentials;
    this.trust = trust;
    this.observer = observer;
    this.targets = targets;
  }

  /**
   * The rejection probes' executor. One rejection probe per namespace at once: they may take
   * minutes, and a refusing engine answers in milliseconds. One running past the hung threshold
   * moves to the rejection hung budget ({@link ProbeLimits#rejectionHung}), so namespaces of
   * engines that take the prompt and never answer do not hold the threads every other namespace's
   * rejection proofs need; it still ends at its own timeout, failed.
   */
  static TenantFairExecutor rejectionExecutor(
      ProbeLimits limits, TenantFairExecutor.HungCounts hungCounts) {
    return new TenantFairExecutor(
        "kvguard-rejection-probe",
        limits.rejectionConcurrency(),
        1,
        limits.rejectionHung(),
        hungCounts,
        false);
  }

  /**
   * What one pass of the policy may know: the last results (the policy is told when those it looks
   * at change), and its credentials and CA bundle, each looked up at most once per pass and only
   * when a pod can be probed.
   */
  Assessment.Known known(ModelDeployment md) {
    ResourceID self = ResourceID.fromResource(md);
    Supplier<ProbeCredentials.Lookup> token =
        once(
            () ->
                credentials.token(
                    self,
                    md.getMetadata().getNamespace(),
                    md.getSpec().effectiveProbe().getAuthSecretRef()));
    Supplier<ProbeTrust.Lookup> tls =
        once(
            () ->
                trust.settings(
                    md.getMetadata().getNamespace(), md.getSpec().effectiveProbe().getTls()));
    return new Assessment.Known() {
      @Override
      public Optional<ProbeScheduler.Result<ProbeOutcome>> probe(ProbeScheduler.Key key) {
        return probes.result(key, self);
      }

      @Override
      public Optional<ProbeScheduler.Result<RejectionOutcome>> rejection(ProbeScheduler.Key key) {
        return rejections.result(key, self);
      }

      @Override
      public ProbeCredentials.Lookup token() {
        return token.get();
      }

      @Override
      public ProbeTrust.Lookup tls() {
        return tls.get();
      }

      @Override
      public EngineProbes probes() {
        return engines;
      }

      @Override
      public Optional<ProbeScheduler.Result<RejectionOutcome>> routerProof(ProbeScheduler.Key key) {
        // Shares the rejection probes' scheduler and threads: one per namespace at once.
        return rejections.result(key, self);
      }

      @Override
      public Optional<RouterProofs.Passed> passedRouterProof() {
        return Optional.ofNullable(passedProofs.get(self));
      }
    };
  }

  /**
   * Sends the probes the pass's assessments want (unless one for the same process is in flight or
   * fresh), and lets go of the policy's other keys for the pods it assessed: a spec edit changed
   * how it asks, a restarted engine needs another prompt.
   */
  void settle(ModelDeployment md, List<Assessment.Assessed> assessed, RouterProofs.Outcome router) {
    ResourceID self = ResourceID.fromResource(md);
    String namespace = md.getMetadata().getNamespace();
    Set<ProbeScheduler.Key> usedProbes = new HashSet<>();
    Set<ProbeScheduler.Key> usedRejections = new HashSet<>();
    router.remember().ifPresent(passed -> passedProofs.put(self, passed));
    if (router.forget() || router.status() == null) {
      // A proof that did not pass, or no router (or no prefill/decode pod to prove) this pass: a
      // router named again later proves before anything opens.
      passedProofs.remove(self);
    }
    if (router.status() != null) {
      // The proof the pass used: other keys of the policy's router proofs go.
      usedRejections.add(router.usedKey());
      router.request().ifPresent(wanted -> prove(md, self, namespace, wanted));
    }
    for (Assessment.Assessed one : assessed) {
      if (one.probeKey() != null) {
        usedProbes.add(one.probeKey());
      }
      if (one.rejectionKey() != null) {
        usedRejections.add(one.rejectionKey());
      }
      one.probe()
          .ifPresent(
              request -> {
                EngineProbe probe = engines.forRole(request.role());
                probes.request(
                    request.key(),
                    self,
                    namespace,
                    request.process().identity(),
                    request::fresh,
                    stillWanted(request.pod(), request.process()),
                    () -> probe.probe(request.endpoint().startingNow()),
                    (outcome, took) -> observer.probed(md, request.role(), outcome, took));
              });
      one.rejection()
          .ifPresent(
              request -> {
                Optional<EngineRejection> engine = engines.forRole(request.role()).rejection();
                rejections.request(
                    request.key(),
                    self,
                    namespace,
                    request.process().identity(),
                    r -> true,
                    stillWanted(request.pod(), request.process()),
                    () ->
                        rejectionProbe.send(
                            engine,
                            request.role().getEngine().wireName(),
                            request.patient().startingNow(),
                            request.promptTokens(),
                            request.model(),
                            request.observation(),
                            EngineRejection.Route.POD),
                    (outcome, took) -> observer.rejectionProbed(md, request.role(), outcome));
              });
    }
    probes.retain(self, usedProbes);
    rejections.retain(self, usedRejections);
  }

  /** Sends the proof through the router, on the rejection probes' threads. */
  private void prove(
      ModelDeployment md, ResourceID self, String namespace, RouterProofs.Request wanted) {
    Optional<EngineRejection> engine =
        engines.forEngine(io.kvguard.customresource.Engine.SGLANG).rejection();
    rejections.request(
        wanted.key(),
        self,
        namespace,
        wanted.keyHash(),
        wanted::fresh,
        Optional::empty,
        () -> {
          if (engine.isEmpty()) {
            return new RejectionOutcome.Failed("kvguard has no rejection probe for engine sglang");
          }
          // Read before every proof: the prompts and the engines' token go where the Service
          // sends them.
          RouterServices.Check service =
              routerServices.check(namespace, wanted.service(), wanted.port());
          if (service instanceof RouterServices.Check.Refused refused) {
            return new RejectionOutcome.Inconclusive(
                RouterServices.NOT_SENT + refused.reason(), wanted.promptTokens());
          }
          if (service instanceof RouterServices.Check.Unreadable unreadable) {
            return new RejectionOutcome.Failed(unreadable.reason());
          }
          String host =
              routerAddress.host(
                  wanted.service(), namespace, ((RouterServices.Check.Usable) service).clusterIP());
          return routerProbe.prove(
              engine.get(),
              wanted.members().stream()
                  .map(
                      m ->
                          new PdRouterProbe.Member(
                              m.pod(), m.mode(), m.endpoint(), m.observation()))
                  .toList(),
              wanted.routerEndpoint(host),
              wanted.model(),
              wanted.promptTokens(),
              wanted.registerFor(),
              io.kvguard.probe.RouterWorkers.Journal.NONE);
        },
        (outcome, took) -> {});
  }

  /** The policy no longer has the pod: what nobody else uses goes, in flight first. */
  void forget(String podUid, ResourceID self) {
    probes.forget(podUid, self);
    rejections.forget(podUid, self);
  }

  /** The policy is gone: its results, and the credentials it held. */
  void forgetAll(ResourceID self) {
    passedProofs.remove(self);
    probes.forgetAll(self);
    rejections.forgetAll(self);
    credentials.forget(self);
  }

  /**
   * The policies anything here is kept for: a router proof, a probe result or request, a token (the
   * sweep of deleted policies, and tests).
   */
  Set<ResourceID> policies() {
    Set<ResourceID> held = new HashSet<>(passedProofs.keySet());
    held.addAll(probes.users());
    held.addAll(rejections.users());
    held.addAll(credentials.users());
    return held;
  }

  private Supplier<Optional<String>> stillWanted(Pod pod, EngineProcess process) {
    return () ->
        targets.whyNotProbe(
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            pod.getMetadata().getUid(),
            process.podIP());
  }

  private static <T> Supplier<T> once(Supplier<T> lookup) {
    return new Supplier<>() {
      private T value;

      @Override
      public synchronized T get() {
        if (value == null) {
          value = lookup.get();
        }
        return value;
      }
    };
  }

  @Override
  public void close() {
    probes.close();
    rejections.close();
    credentials.close();
  }
}

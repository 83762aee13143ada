package io.kvguard;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.PodGate;
import io.kvguard.gate.RecordSigner;
import io.kvguard.observe.EventRecorder;
import io.kvguard.observe.EventRecorderSettings;
import io.kvguard.observe.KvguardMetrics;
import io.kvguard.observe.Observer;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.PdRouterProbe;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.probe.RouterAddress;
import io.kvguard.reconciler.ModelDeploymentReconciler;
import io.kvguard.reconciler.ProbeCredentials;
import io.kvguard.reconciler.ProbeLimits;
import io.kvguard.reconciler.ProbeTrust;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator as production runs it; tests, the demo and the benchmark build it through here too,
 * so they exercise the same patch strategy (JSON patches, no server-side apply) and the same
 * wiring.
 */
public final class KvguardOperator implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KvguardOperator.class);
  private final Operator operator;
  private final RegisteredController<ModelDeployment> controller;
  private final ModelDeploymentReconciler reconciler;
  private final VerdictKeySecret verdictKey;
  private final AtomicBoolean stopping;
  private final Runnable releaseLease;
  private final boolean leaderElection;
  private final WatchedNamespaces namespaces;

  /**
   * How long the first pass waits for the verdict key's first read (one GET, a create when absent).
   * Bounded: past it the pass goes on keyless (every pod probed, records unsigned: fail closed, as
   * when the read fails), so a slow API server cannot hold the elector's thread near its renew
   * deadline.
   */
  static final Duration FIRST_KEY_READ_WAIT = Duration.ofSeconds(5);

  private KvguardOperator(
      Operator operator,
      RegisteredController<ModelDeployment> controller,
      ModelDeploymentReconciler reconciler,
      VerdictKeySecret verdictKey,
      AtomicBoolean stopping,
      Runnable releaseLease,
      boolean leaderElection,
      WatchedNamespaces namespaces) {
    this.operator = operator;
    this.namespaces = namespaces;
    this.controller = controller;
    this.leaderElection = leaderElection;
    this.reconciler = reconciler;
    this.verdictKey = verdictKey;
    this.stopping = stopping;
    this.releaseLease = releaseLease;
  }

  /**
   * @param exitOnStopLeading production exits when it loses the lease or an informer stops for good
   *     (Kubernetes restarts it as a follower); tests pass false, which only logs
   */
  public static KvguardOperator create(
      KubernetesClient client,
      KvguardConfig config,
      MeterRegistry registry,
      Clock clock,
      boolean exitOnStopLeading) {
    // On a thread of its own: the elector's thread must return for the shutdown that exit starts to
    // finish.
    Runnable exit = () -> new Thread(() -> System.exit(1), "kvguard-step-down").start();
    return create(client, config, registry, clock, exitOnStopLeading ? exit : () -> {});
  }

  /**
   * @param onLeaseLost what a replica that lost the lease while running does (production: exit, so
   *     nothing it still holds in flight writes beside the new leader); also what it does when an
   *     informer stops for good ({@link InformerStopped}). Never run when the replica itself is
   *     stopping: JOSDK's own exit-on-stop-leading would call System.exit from inside the shutdown
   *     hook that stops it, which blocks until the kubelet kills the pod at the end of its grace
   *     period (and the lease is not handed over early).
   */
  public static KvguardOperator create(
      KubernetesClient client,
      KvguardConfig config,
      MeterRegistry registry,
      Clock clock,
      Runnable onLeaseLost) {
    return create(client, config, registry, clock, onLeaseLost, RouterAddress.CLUSTER_IP);
  }

  /**
   * @param routerAddress where a prefill/decode router's Service answers (the cluster's DNS in
   *     production; tests point it at fake routers on loopback)
   */
  public static KvguardOperator create(
      KubernetesClient client,
      KvguardConfig config,
      MeterRegistry registry,
      Clock clock,
      Runnable onLeaseLost,
      RouterAddress routerAddress) {
    KvguardMetrics metrics = new KvguardMetrics(registry);
    // Before anything starts: a watched namespace kvguard may not read must not fail the start.
    WatchedNamespaces namespaces = WatchedNamespaces.check(client, metrics, config.namespaces());
    // Built beside the informers' start: the first probe is the first to need it.
    EngineHttp engineHttp = EngineHttp.buildingInBackground(config.probeMaxBodyBytes());
    AtomicBoolean stopping = new AtomicBoolean();
    String ownNamespace =
        config.leaseNamespace() != null ? config.leaseNamespace() : client.getNamespace();
    // Read beside the informers' start, not before it: the first pass is what needs the key (its
    // records are trusted and signed with it), and it waits for this read (onStartLeading, start).
    VerdictKeySecret verdictKey =
        VerdictKeySecret.loadInBackground(client, ownNamespace, config.verdictKeySecret());
    Operator operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry))
                  .withUseSSAToPatchPrimaryResource(false)
                  .withSSABasedCreateUpdateMatchForDependentResources(false)
                  .withCloseClientOnStop(false)
                  // Not JOSDK's System.exit from the event loop, and never while stopping.
                  .withInformerStoppedHandler(new InformerStopped(stopping::get, onLeaseLost));
              if (config.leaderElection()) {
                LeaderCallbacks callbacks =
                    new LeaderCallbacks(
                        // JOSDK starts event processing (the first pass) right after this returns.
                        () -> verdictKey.awaitFirstAttempt(FIRST_KEY_READ_WAIT),
                        () -> {
                          if (!stopping.get()) {
                            LOG.error(
                                "lost the lease {} while running; stepping down",
                                KvguardConfig.LEASE_NAME);
                            onLeaseLost.run();
                          }
                        },
                        leader -> {});
                o.withLeaderElectionConfiguration(
                    new LeaderElectionConfiguration(
                        KvguardConfig.LEASE_NAME,
                        config.leaseNamespace(),
                        Duration.ofSeconds(15),
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(2),
                        config.identity(),
                        callbacks,
                        false));
              }
            });
    EngineProbes probes = EngineProbes.standard(engineHttp);
    RecordSigner signer = verdictKey.signer();
    RejectionProbe rejectionProbe =
        new RejectionProbe(engineHttp, config.rejectionMaxPromptTokens());
    ModelDeploymentReconciler reconciler =
        new ModelDeploymentReconciler(
            probes,
            rejectionProbe,
            new PdRouterProbe(engineHttp, rejectionProbe),
            routerAddress,
            io.kvguard.reconciler.RouterServices.reading(client),
            new ProbeLimits(
                config.probeConcurrency(),
                config.probeConcurrencyPerNamespace(),
                config.rejectionProbeConcurrency(),
                config.hungProbeLimit(),
                ProbeLimits.DEFAULT_HUNG_AFTER),
            new PodGate(client, clock),
            new Observer(
                new EventRecorder(
                    EventRecorder.clientWithoutRetries(client),
                    metrics,
                    clock,
                    config.identity(),
                    EventRecorderSettings.standard()),
                metrics),
            new ProbeCredentials(client, clock),
            new ProbeTrust(client, clock),
            signer,
            clock,
            config.podListConcurrency());
    RegisteredController<ModelDeployment> controller =
        operator.register(
            reconciler,
            c -> {
              if (!namespaces.watched().isEmpty()) {
                c.settingNamespaces(namespaces.watched());
              }
            });
    Runnable releaseLease =
        config.leaderElection()
            ? () ->
                LeaseRelease.release(
                    client, ownNamespace, KvguardConfig.LEASE_NAME, config.identity())
            : () -> {};
    return new KvguardOperator(
        operator,
        controller,
        reconciler,
        verdictKey,
        stopping,
        releaseLease,
        config.leaderElection(),
        namespaces);
  }

  public void start() {
    if (!leaderElection) {
      // Without a lease JOSDK processes events as soon as the caches are synced: the key's read
      // comes first, as it did when it ran in create.
      verdictKey.awaitFirstAttempt(FIRST_KEY_READ_WAIT);
    }
    // With a lease, the pods are listed as soon as the informer has synced, beside the lease's
    // review and the lease itself.
    AtomicBoolean started = new AtomicBoolean();
    if (leaderElection) {
      PodCacheWarmUp.start(controller, reconciler, stopping, started::get);
    }
    try {
      operator.start();
    } finally {
      started.set(true);
    }
    // A namespace left out at the start is taken in by the next start; an informer refused while
    // running is left out of the replica's health.
    namespaces.recheck(stopping::get, () -> InformerHealth.notWatching(controller));
  }

  public Operator operator() {
    return operator;
  }

  /** The namespace's ModelDeployments from the informer cache (the admission webhook's view). */
  public java.util.List<io.kvguard.customresource.ModelDeployment> cachedPolicies(
      String namespace) {
    return reconciler.cachedPolicies(namespace);
  }

  /**
   * Healthy when every informer and event source is running and the verdict key is held (a keyless
   * replica trusts no record; it keeps asking for the key and stays unready meanwhile). The
   * informers of a watched namespace that refuses kvguard their resources (403) do not count
   * ({@link WatchedNamespaces#refusedNow}): one tenant's namespace must not take the webhook's
   * endpoints away from every other.
   */
  public boolean healthy() {
    return operator.getRuntimeInfo().isStarted()
        && InformerHealth.healthy(controller, namespaces::refusedNow)
        && verdictKey.holdsKey();
  }

  @Override
  public void close() {
    // Stopping gives the lease up on purpose: that is no loss to react to.
    stopping.set(true);
    namespaces.close();
    operator.stop();
    reconciler.shutdown();
    verdictKey.close();
    // Only once nothing of ours reconciles any more may the next leader start.
    releaseLease.run();
  }
}

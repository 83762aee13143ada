package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.EventSourceRetriever;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateWriter;
import io.kvguard.gate.PodGate;
import io.kvguard.gate.RecordSigner;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.observe.Observer;
import io.kvguard.observe.PassReport;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.RejectionProbe;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass over a ModelDeployment, in stages that each return what they did: select pods ({@link
 * PodSelection}, each pod once) → assess each ({@link Assessment}, pure, never waiting for an
 * engine; {@link ProbeBook} sends the probes it wants) → arbitrate with other policies and write
 * gates ({@link GateStage}) → build the status ({@link StatusFactory}) → one {@link
 * io.kvguard.observe.PassReport} for events, metrics and logs.
 *
 * <p>Every event reaches {@link #reconcile}, deletions too, so kvguard adds its finalizer itself,
 * just before a policy's first write to a pod ({@link PolicyFinalizer}), instead of JOSDK adding it
 * before the first pass and holding every new policy's probes back until the finalizer's watch
 * event returns.
 */
@ControllerConfiguration(name = ModelDeploymentReconciler.NAME, triggerReconcilerOnAllEvents = true)
public final class ModelDeploymentReconciler implements Reconciler<ModelDeployment> {
  public static final String NAME = "modeldeployment";
  private static final Logger LOG = LoggerFactory.getLogger(ModelDeploymentReconciler.class);
  private static final Duration WRITE_RETRY = Duration.ofSeconds(5);

  /** Long after JOSDK ended the scope of a deletion's pass (passOwedAfterDeletion). */
  private static final Duration DELETION_SCOPE_END = Duration.ofSeconds(1);

  /** How soon a deletion's pass that could not list its namespace's pods comes back. */
  private static final Duration DELETION_RELIST = Duration.ofSeconds(5);

  /** Events a policy is given after a deletion's pass of its name while it has had no pass. */
  private static final int OWED_PASS_EVENTS = 5;

  private final Clock clock;
  private final ProbeEventSource probeEvents = new ProbeEventSource();
  private final ProbeBook probes;
  private final GateStage gates;

  /** What is kept per policy, and the one place that forgets it. */
  private final PolicyMemory memory;

  private final OwedPass owedPasses;

  private final Observer observer;
  private final RecordSigner signer;

  /** Pods of the namespaces that hold a ModelDeployment, and no others (PodCache). */
  private final PodCache pods;

  /** Where the pod informers are registered, once {@link #cachePodsAhead} was handed it. */
  private volatile EventSourceRetriever<ModelDeployment> podSources;

  private volatile IndexerResourceCache<ModelDeployment> policies;

  /**
   * Counts the stranded pods of every cached namespace ({@link StrandedPods}) on a timer: a pod a
   * deleted policy left triggers no pass (no policy concerns it), neither when it is handed back by
   * hand nor when it is deleted. The same timer forgets the policies the cache no longer holds
   * ({@link PolicyMemory}).
   */
  private final java.util.concurrent.ScheduledExecutorService strandedCount =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvguard-stranded-pods");
            thread.setDaemon(true);
            return thread;
          });

  public ModelDeploymentReconciler(
      EngineProbes engines,
      RejectionProbe rejectionProbe,
      io.kvguard.probe.PdRouterProbe routerProbe,
      io.kvguard.probe.RouterAddress routerAddress,
      RouterServices routerServices,
      ProbeLimits limits,
      PodGate gate,
      Observer observer,
      ProbeCredentials credentials,
      ProbeTrust trust,
      RecordSigner signer,
      Clock clock,
      int podListConcurrency) {
    this.pods =
        new PodCache(
            pod -> {
              Set<ResourceID> concerned =
                  policiesConcerning(pod).stream()
                      .map(ResourceID::fromResource)
                      .collect(Collectors.toCollection(HashSet::new));
              // A pod edited out of every selector and stripped of its record still concerns the
              // policy that kept it last pass: that policy lets it go shut.
              concerned.addAll(keptBy(pod));
              return concerned;
            },
            podListConcurrency,
            clock);
    this.clock = clock;
    this.signer = signer;
    this.observer = observer;
    this.probes =
        new ProbeBook(
            limits,
            clock,
            engines,
            rejectionProbe,
            routerProbe,
            routerAddress,
            routerServices,
            credentials,
            trust,
            observer,
            this::whyNotProbe,
            probeEvents::probeFinished);
    this.gates =
        new GateStage(
            new GateWriter(gate),
            signer,
            new GateStage.Cluster() {
              @Override
              public Set<ResourceID> othersConcerning(Pod pod, ResourceID self) {
                return policiesConcerning(pod).stream()
                    .map(ResourceID::fromResource)
                    .filter(id -> !id.equals(self))
                    .collect(Collectors.toSet());
              }

              @Override
              public Optional<Pod> cachedPod(String namespace, String name) {
                return ModelDeploymentReconciler.this.cachedPod(namespace, name);
              }

              @Override
              public boolean enforces(ResourceID policy) {
                IndexerResourceCache<ModelDeployment> cache = policies;
                ModelDeployment md = cache == null ? null : cache.get(policy).orElse(null);
                return md == null
                    || md.getSpec() == null
                    || md.getSpec().effectiveEnforcement() != Enforcement.Audit;
              }
            },
            probes::forget,
            probeEvents::probeFinished);
    this.memory = new PolicyMemory(probes, gates, observer);
    this.owedPasses =
        new OwedPass(
            strandedCount,
            name -> {
              IndexerResourceCache<ModelDeployment> cache = policies;
              return cache == null ? Optional.empty() : cache.get(name);
            },
            probeEvents::policyNeedsPass,
            DELETION_SCOPE_END,
            OWED_PASS_EVENTS);
  }

  /** What is kept per policy, by part (tests: nothing outlives its policy). */
  Map<String, Set<String>> policyMemory() {
    return memory.heldByPart();
  }

  /**
   * The ModelDeployments of a namespace as the informer holds them, for the admission webhook
   * (memory only; empty before the informer started). Followers' informers run too, so every
   * replica answers from a warm cache.
   */
  public List<ModelDeployment> cachedPolicies(String namespace) {
    IndexerResourceCache<ModelDeployment> cache = policies;
    return cache == null ? List.of() : cache.list(namespace).toList();
  }

  @Override
  public List<EventSource<?, ModelDeployment>> prepareEventSources(
      EventSourceContext<ModelDeployment> context) {
    policies = context.getPrimaryCache();
    SelectionIndex.register(policies);
    strandedCount.scheduleWithFixedDelay(
        this::countStranded,
        StrandedPods.RECOUNT.toMillis(),
        StrandedPods.RECOUNT.toMillis(),
        java.util.concurrent.TimeUnit.MILLISECONDS);
    // Pod informers are started per namespace by the passes that need them (PodCache).
    return List.of(probeEvents);
  }

  /**
   * Caches the pods of every namespace that holds a ModelDeployment now, one namespace after
   * another, as the first pass of each would ({@link PodCache#use}); returns how many namespaces.
   * Each namespace is kept cached afterwards as long as a ModelDeployment is left there. A failed
   * LIST throws: the passes list again.
   */
  public int cachePodsAhead(EventSourceRetriever<ModelDeployment> sources) {
    IndexerResourceCache<ModelDeployment> cache = policies;
    if (cache == null) {
      return 0;
    }
    podSources = sources;
    List<String> namespaces =
        cache.list().map(md -> md.getMetadata().getNamespace()).distinct().sorted().toList();
    for (String namespace : namespaces) {
      pods.use(namespace, sources, cache).close();
    }
    return namespaces.size();
  }

  @Override
  public UpdateControl<ModelDeployment> reconcile(
      ModelDeployment md, Context<ModelDeployment> context) {
    // As pass() decides: a deletion's scope may hand it the policy created again under the name,
    // which is live, and gets a pass like any other.
    boolean deletion =
        (context.isPrimaryResourceDeleted() && !cachedAsLive(md)) || md.isMarkedForDeletion();
    PodCache.InUse namespacePods;
    try {
      namespacePods =
          pods.use(
              md.getMetadata().getNamespace(), context.eventSourceRetriever(), policies, deletion);
    } catch (RuntimeException e) {
      // The namespace's pods cannot be seen as they are: its watch has been down too long and
      // listing it anew had its WATCH refused, or for that long nothing of it could be cached for
      // the same reason. The pass shuts every pod it selects (no probe, no opening) and fails all
      // the same, to be retried. A LIST that failed too (an outage) shuts nothing.
      PodCache.Refused unseen =
          pods.refused(md.getMetadata().getNamespace(), clock.instant()).orElse(null);
      if (unseen != null && !deletion) {
        try {
          pass(md, context, unseen, Optional.empty());
        } catch (RuntimeException shutFailed) {
          e.addSuppressed(shutFailed);
        }
      }
      if (context.isPrimaryResourceDeleted()) {
        passOwedAfterDeletion(ResourceID.fromResource(md));
      } else if (md.isMarkedForDeletion()
          && pods.listForbidden(md.getMetadata().getNamespace()).isPresent()) {
        // kvguard may not list the namespace's pods (HTTP 403): its RoleBinding may have gone with
        // the namespace. JOSDK's retries end after five tries (26 s, GenericRetry.DEFAULT at
        // v5.2.3), before the bound past which the hand-back goes on without them (PodCache): the
        // pass comes back until it can list or that bound has passed.
        LOG.info(
            "ModelDeployment {}/{} is deleted and its pods cannot be listed now: {}",
            md.getMetadata().getNamespace(),
            md.getMetadata().getName(),
            e.getMessage());
        return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(DELETION_RELIST);
      }
      throw e;
    }
    try (namespacePods) {
      return pass(md, context, null, namespacePods.listForbiddenSince());
    } finally {
      if (context.isPrimaryResourceDeleted()) {
        passOwedAfterDeletion(ResourceID.fromResource(md));
      }
    }
  }

  /**
   * One pass: select → assess → arbitrate and write → status → signals. Each stage returns what it
   * did; none reports to another.
   */
  /**
   * @param unseen non-null: the namespace's pods cannot be seen as they are, and every one the
   *     policy selects is shut ({@link #unwatched})
   */
  private UpdateControl<ModelDeployment> pass(
      ModelDeployment md,
      Context<ModelDeployment> context,
      PodCache.Refused unseen,
      Optional<Instant> listForbidden) {
    // A deletion's pass may be handed the policy created again under the name (see
    // passOwedAfterDeletion): that one is live, and gets a pass like any other.
    boolean deleted = context.isPrimaryResourceDeleted() && !cachedAsLive(md);
    if (deleted || md.isMarkedForDeletion()) {
      handBack(md, context, listForbidden);
      return UpdateControl.noUpdate();
    }
    // First of all: the sweep of deleted policies must see this one as live before it keeps
    // anything.
    Long lastGeneration = memory.passStarting(md);
    // A pass in a deletion's scope is not the policy's own: JOSDK forgets the name after it.
    owedPasses.passStarted(md, context.isPrimaryResourceDeleted());
    Instant now = clock.instant();
    // A spec it cannot read is named here and held by SpecProblems; a status it cannot read is
    // treated as absent and rewritten by this pass.
    observer.readability(md);
    PassStart start = start(md, lastGeneration);
    AssessedPods pass =
        start.invalid().isPresent()
            ? new AssessedPods(held(md, start), null)
            : unseen != null
                ? new AssessedPods(unwatched(md, unseen), null)
                : assess(
                    md,
                    PodSelection.firstRoleWins(
                        md.getSpec().getRoles(), role -> selectedPods(md, role)),
                    start,
                    now);
    List<PodAssessment> assessed = pass.pods();
    // In a deletion's scope (handed the policy created again under the name), the pods recorded
    // under the name that this policy does not select were the deleted one's: handed back open.
    GateStage.Written written =
        gates.write(
            md,
            hooks(md, context, false),
            assessed,
            start.before(),
            now,
            context.isPrimaryResourceDeleted());
    List<AdvisoryWarnings.Found> advisories = AdvisoryWarnings.of(md, written.kept());
    List<PodVerdictStatus> entries = StatusFactory.entries(written.kept(), start.before(), now);
    ModelDeploymentStatus status =
        StatusFactory.build(
            md,
            entries,
            roleNotes(md, start, advisories),
            start.invalid(),
            written.conflicts(),
            now);
    status.routerProof = pass.routerProof();
    // Announced before the status is written: the pods' records already hold this pass's verdicts,
    // so a transition not announced now (the status write failing) would never be.
    observer.report(report(md, start, entries, written, advisories));
    if (start.invalid().isEmpty()) {
      observer.credentialsInClear(
          md,
          md.getSpec().getRoles().stream()
              .filter(role -> RoleNotes.sendsCredentialsInClear(md.getSpec(), role))
              .map(RoleSpec::getName)
              .toList());
    }
    if (!StatusComparison.same(md.getStatus(), status)) {
      writeStatus(md, context, status);
    }
    return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(nextPass(md, written, now));
  }

  /**
   * What a pass starts from.
   *
   * @param respec the spec changed since the policy's last pass: its pods are probed again
   * @param invalid why the spec cannot be applied, if it cannot
   * @param before what the policy last concluded about each pod it gated, by pod name
   */
  private record PassStart(
      ResourceID self,
      boolean respec,
      Optional<String> invalid,
      Map<String, VerdictRecord> before) {}

  private PassStart start(ModelDeployment md, Long lastGeneration) {
    ResourceID self = ResourceID.fromResource(md);
    long generation =
        md.getMetadata().getGeneration() == null ? 0 : md.getMetadata().getGeneration();
    return new PassStart(
        self,
        lastGeneration != null && lastGeneration != generation,
        SpecProblems.of(md.getSpec()),
        previousRecords(md));
  }

  /**
   * Assesses each selected pod from what is known (an error of kvguard's own shuts that pod and the
   * others go on), then sends the probes the assessments want.
   */
  /** A pass's assessments, and the proof through the router it showed (null: none). */
  private record AssessedPods(
      List<PodAssessment> pods, io.kvguard.customresource.RouterProofStatus routerProof) {}

  private AssessedPods assess(
      ModelDeployment md, List<PodSelection.Selected> selected, PassStart start, Instant now) {
    Assessment.Known known = probes.known(md);
    List<Assessment.Assessed> assessed = new ArrayList<>();
    for (PodSelection.Selected one : selected) {
      Pod pod = one.pod();
      try {
        assessed.add(
            Assessment.of(
                new Assessment.Input(
                    md, one.role(), pod, trustedRecord(md, pod), start.respec(), now),
                known));
      } catch (RuntimeException e) {
        LOG.warn(
            "cannot assess pod {}/{}: {}",
            pod.getMetadata().getNamespace(),
            pod.getMetadata().getName(),
            e.toString());
        assessed.add(
            Assessment.Assessed.unprobed(ShutAssessments.failed(pod, one.role().getName(), e)));
      }
    }
    RouterProofs.Outcome router =
        RouterProofs.apply(md, md.getMetadata().getUid(), assessed, known, now);
    probes.settle(md, router.assessed(), router);
    return new AssessedPods(
        router.assessed().stream().map(Assessment.Assessed::assessment).toList(), router.status());
  }

  /**
   * The pods of a namespace kvguard cannot see as they are ({@link PodCache.Refused}): none is
   * probed or opened and each selected one is shut. Selected from the cache the lost watch left,
   * or, when nothing of the namespace could be cached, from what the last refused start listed (a
   * pod shown as it was is read again when its write is refused by the resourceVersion test).
   */
  private List<PodAssessment> unwatched(ModelDeployment md, PodCache.Refused unseen) {
    String namespace = md.getMetadata().getNamespace();
    return PodSelection.firstRoleWins(
            md.getSpec().getRoles(),
            role ->
                unseen.listed() == null
                    ? selectedPods(md, role)
                    : unseen
                        .listed()
                        .kept()
                        .filter(pod -> !PodGate.terminating(pod))
                        .filter(
                            pod ->
                                LabelSelectors.matches(
                                    role.getSelector(), pod.getMetadata().getLabels()))
                        .toList())
        .stream()
        .map(
            one ->
                ShutAssessments.unwatched(
                    one.pod(), one.role().getName(), namespace, unseen.since()))
        .toList();
  }

  /**
   * A spec that cannot be applied says nothing about which pods it means: the pods it gated stay
   * its own, shut, and listed, so neither a typo nor the deletion that follows it opens anything
   * unverified.
   */
  private List<PodAssessment> held(ModelDeployment md, PassStart start) {
    List<PodAssessment> held = new ArrayList<>();
    new java.util.TreeMap<>(start.before())
        .forEach(
            (name, record) ->
                cachedPod(md.getMetadata().getNamespace(), name)
                    .filter(pod -> !PodGate.terminating(pod))
                    .ifPresent(
                        pod ->
                            held.add(
                                ShutAssessments.heldForInvalidSpec(
                                    pod, record, start.invalid().get()))));
    return held;
  }

  /**
   * What the status notes per role: the role's configuration, then the engine advisories that
   * apply.
   */
  private static Map<String, List<String>> roleNotes(
      ModelDeployment md, PassStart start, List<AdvisoryWarnings.Found> advisories) {
    Map<String, List<String>> notes = new LinkedHashMap<>();
    if (start.invalid().isEmpty()) {
      md.getSpec()
          .getRoles()
          .forEach(
              role -> notes.put(role.getName(), new ArrayList<>(RoleNotes.of(md.getSpec(), role))));
    }
    advisories.forEach(
        found -> notes.computeIfAbsent(found.role(), r -> new ArrayList<>()).add(found.note()));
    return notes;
  }

  private static PassReport report(
      ModelDeployment md,
      PassStart start,
      List<PodVerdictStatus> entries,
      GateStage.Written written,
      List<AdvisoryWarnings.Found> advisories) {
    List<PassReport.PodFigures> figures =
        written.kept().stream()
            .map(
                a ->
                    new PassReport.PodFigures(
                        a.role(),
                        a.podName(),
                        a.observation() == null ? -1 : a.observation().poolTokens(),
                        a.verdict().verified()))
            .toList();
    List<PassReport.Advisory> warnings =
        advisories.stream()
            .map(
                found ->
                    new PassReport.Advisory(
                        found.role(), found.advisory(), found.message(), found.pods()))
            .toList();
    return new PassReport(
        md,
        start.before(),
        entries,
        figures,
        warnings,
        written.flips(),
        written.failures(),
        written.released());
  }

  private static void writeStatus(
      ModelDeployment md, Context<ModelDeployment> context, ModelDeploymentStatus status) {
    // Not UpdateControl.patchStatus: without SSA that is a JSON diff against the cached copy, which
    // lags behind our own last write (JOSDK 5 does not cache it), so the patch fails (422) and
    // events repeat. Nor fabric8's editStatus (JOSDK's patchStatusAndCacheResource): it copies the
    // whole resource twice through JSON to compute that diff, the largest part of a status write's
    // cost (issue 28 §5). The status is kvguard's alone and every pass concludes all of it, so one
    // JSON patch sets it whole ("add" replaces a member that exists), guarded by the version it was
    // concluded from, and the answer goes to the cache so the next pass reads its own write. (A
    // JSON patch, never server-side apply, as everywhere in kvguard.)
    var client = context.getClient();
    String value = client.getKubernetesSerialization().asJson(status);
    String uid = md.getMetadata().getUid();
    try {
      // JOSDK's own loop around the write: the answer is cached, and a 409 or 422 waits for a newer
      // copy in the cache and is tried again (v5.2.3, PrimaryUpdateAndCacheUtils).
      PrimaryUpdateAndCacheUtils.updateAndCacheResource(
          md,
          context,
          UnaryOperator.identity(),
          current -> {
            // The copy JOSDK tries again on is whatever its cache holds under the name: a policy
            // deleted and created again is another policy, and this pass's conclusions (trusted as
            // a probe's stand-in, trustedRecord) are not its.
            if (uid != null && !uid.equals(current.getMetadata().getUid())) {
              throw new PolicyReplaced();
            }
            // Addressed, not the copy: fabric8 would copy the whole policy through JSON first.
            return client
                .resource(PolicyAddress.of(current))
                .subresource("status")
                .patch(
                    io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                        io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
                    statusPatch(current.getMetadata().getResourceVersion(), value));
          });
    } catch (PolicyReplaced e) {
      LOG.debug(
          "{}/{} was created again during a pass of the deleted one: its status is not written",
          md.getMetadata().getNamespace(),
          md.getMetadata().getName());
    } catch (KubernetesClientException | java.util.NoSuchElementException e) {
      // Deleted during the pass: the write finds nothing (404), or JOSDK's wait for a newer copy
      // after a 409 or 422 reads its cache with orElseThrow (v5.2.3,
      // PrimaryUpdateAndCacheUtils.pollLocalCache) and the policy has left it. Anything else, a 404
      // included while the cache still holds the policy (a CRD without its status subresource),
      // fails the pass.
      boolean gone = !(e instanceof KubernetesClientException refused) || refused.getCode() == 404;
      if (!gone || policyCached(context, md)) {
        throw e;
      }
      LOG.debug(
          "{}/{} was deleted during its pass: its status is not written",
          md.getMetadata().getNamespace(),
          md.getMetadata().getName());
    }
  }

  private static boolean policyCached(Context<ModelDeployment> context, ModelDeployment md) {
    return context.getPrimaryCache().get(ResourceID.fromResource(md)).isPresent();
  }

  /**
   * The status write: the copy's resourceVersion, then the status whole. The version makes it the
   * write fabric8's editStatus diff was (fabric8 v7.5.2, OperationSupport.handlePatch: "include the
   * resourceVersion in the patch"): the API server answers 409 unless the policy is still at the
   * version the pass read, so a write never lands on a policy deleted and created again under the
   * name (a new object, a new version) without the UID check above seeing it first.
   */
  static String statusPatch(String resourceVersion, String status) {
    String version =
        resourceVersion == null
            ? ""
            : "{\"op\":\"add\",\"path\":\"/metadata/resourceVersion\",\"value\":"
                + com.fasterxml.jackson.databind.node.TextNode.valueOf(resourceVersion)
                + "},";
    return "[" + version + "{\"op\":\"add\",\"path\":\"/status\",\"value\":" + status + "}]";
  }

  /** The name's policy is no longer the one the pass read. */
  private static final class PolicyReplaced extends RuntimeException {
    PolicyReplaced() {
      super(null, null, false, false);
    }
  }

  /**
   * Whatever kvguard writes to a pod, deleting the policy must be able to undo, so the finalizer
   * goes on first (a policy already gone is handing its pods back, which needs no undoing). Each
   * write is cached as it is accepted, so the next pass sees it before the watch delivers it, and
   * the watch event of the condition write (arriving before the label write) is known as ours and
   * triggers no pass.
   */
  private GateWriter.Hooks hooks(
      ModelDeployment md, Context<ModelDeployment> context, boolean gone) {
    return new GateWriter.Hooks() {
      @Override
      public void beforeWrite() {
        if (!gone) {
          PolicyFinalizer.ensure(context, md);
        }
      }

      @Override
      public void accepted(Pod written, Pod previous, Pod read) {
        pods.written(written, previous, read);
      }
    };
  }

  /**
   * A policy being deleted (or, without our finalizer, already gone) hands every pod it selected or
   * listed back open, unless another policy holds it, then lets the deletion finish. Writes nothing
   * a pod already shows, so the deletion event that follows the finalizer's removal repeats it at
   * no cost; and a policy whose finalizer someone removed by hand still hands its pods back if the
   * operator sees it go.
   */
  private void handBack(
      ModelDeployment md, Context<ModelDeployment> context, Optional<Instant> listForbidden) {
    Map<String, Pod> concerned = new LinkedHashMap<>();
    if (SpecProblems.of(md.getSpec()).isEmpty()) {
      for (RoleSpec role : md.getSpec().getRoles()) {
        selectedPods(md, role).forEach(pod -> concerned.put(pod.getMetadata().getName(), pod));
      }
    }
    previousRecords(md)
        .keySet()
        .forEach(
            name ->
                cachedPod(md.getMetadata().getNamespace(), name)
                    .ifPresent(pod -> concerned.putIfAbsent(name, pod)));
    List<PassReport.WriteFailure> failed =
        gates.handBack(md, hooks(md, context, context.isPrimaryResourceDeleted()), concerned);
    // Without the pods as they are, every pod it gated and does not know of keeps that gate.
    listForbidden.ifPresent(since -> observer.handBackUnlisted(md, since));
    memory.policyGone(md, failed);
    if (!context.isPrimaryResourceDeleted()) {
      PolicyFinalizer.release(context.getClient(), md);
    }
  }

  /** Whether the policy cache holds this very policy (its UID), not being deleted. */
  private boolean cachedAsLive(ModelDeployment md) {
    IndexerResourceCache<ModelDeployment> cache = policies;
    return cache != null
        && cache
            .get(ResourceID.fromResource(md))
            .filter(
                held ->
                    java.util.Objects.equals(
                        md.getMetadata().getUid(), held.getMetadata().getUid()))
            .filter(held -> !held.isMarkedForDeletion())
            .isPresent();
  }

  /**
   * A pass JOSDK runs on a deletion is the last it runs for the name until the policy's own watch
   * sends another event: when it ends, JOSDK forgets every event of the name that came meanwhile,
   * and drops every later one that is not the policy's own (probe completions, pod events, the
   * pass's reschedule) while it keeps no state for the name (operator-framework/java-operator-sdk
   * v5.2.3, operator-framework-core/src/main/java/io/javaoperatorsdk/operator/processing/event/:
   * {@code EventProcessor.eventProcessingFinished} calls {@code cleanupForDeletedEvent}, and {@code
   * ResourceStateManager.getOrCreateOnResourceEvent} makes state for resource events only). So a
   * policy created again under the name while the deletion's passes ran (kubectl replace --force)
   * lost its creation event, and would get no pass until edited: its pods as the old policy left
   * them, opened by the hand-back, for good. A second after this pass ends (JOSDK ends its scope on
   * the same thread as soon as it returns, EventProcessor.ReconcilerExecutor.run), a policy the
   * cache then holds under the name is given the event it lost, and again while it has had no pass
   * of its own, outside a deletion's scope ({@link OwedPass}: a stall of this thread past the first
   * second would lose the first, and a pass this scope ran of that policy is forgotten with it).
   */
  private void passOwedAfterDeletion(ResourceID name) {
    owedPasses.deletionPassEnded(name);
  }

  /**
   * The pods a role selects, leaving out those being deleted: nothing is probed or written for
   * them.
   */
  private List<Pod> selectedPods(ModelDeployment md, RoleSpec role) {
    return SelectionIndex.selected(pods, md.getMetadata().getNamespace(), role.getSelector())
        .stream()
        .filter(pod -> !PodGate.terminating(pod))
        .toList();
  }

  /** The policies whose last pass kept the pod (the pod cache maps events before gates exist). */
  private Set<ResourceID> keptBy(Pod pod) {
    // A pod the cache holds as its key alone (no policy's business) carries no UID.
    String uid = pod.getMetadata().getUid();
    return gates == null || uid == null ? Set.of() : gates.keptBy(uid);
  }

  private Optional<Pod> cachedPod(String namespace, String name) {
    return pods.get(new ResourceID(name, namespace));
  }

  /**
   * Every policy in the pod's namespace that selects it now, recorded a verdict on it, or lists it
   * in its status.
   */
  private List<ModelDeployment> policiesConcerning(Pod pod) {
    String name = pod.getMetadata().getName();
    Set<String> recorded = VerdictRecords.of(pod).keySet();
    return SelectionIndex.candidatePolicies(policies, pod, pods.keeps(pod)).stream()
        .filter(md -> md.getMetadata().getDeletionTimestamp() == null)
        .filter(
            md ->
                selects(md, pod)
                    || recorded.contains(md.getMetadata().getName())
                    || (md.getStatus() != null
                        && md.getStatus().pods != null
                        && md.getStatus().pods.stream().anyMatch(p -> name.equals(p.name))))
        .toList();
  }

  /**
   * Asked just before a queued probe is sent: the pod must still be the same pod (UID), at the same
   * IP, on the pod network, and selected by a policy that is not being deleted. Otherwise the probe
   * is not sent.
   */
  private Optional<String> whyNotProbe(String namespace, String name, String uid, String podIP) {
    Optional<Pod> current = cachedPod(namespace, name);
    if (current.isEmpty() || !uid.equals(current.get().getMetadata().getUid())) {
      return Optional.of("pod " + namespace + "/" + name + " is gone");
    }
    Pod pod = current.get();
    if (pod.getStatus() == null || !podIP.equals(pod.getStatus().getPodIP())) {
      return Optional.of("pod " + namespace + "/" + name + " no longer has IP " + podIP);
    }
    if (EngineProcess.usesHostNetwork(pod)) {
      return Optional.of("pod " + namespace + "/" + name + " uses the node's network");
    }
    boolean selected =
        SelectionIndex.candidatePolicies(policies, pod, true).stream()
            .anyMatch(md -> md.getMetadata().getDeletionTimestamp() == null && selects(md, pod));
    return selected
        ? Optional.empty()
        : Optional.of("no policy selects pod " + namespace + "/" + name + " any more");
  }

  private static boolean selects(ModelDeployment md, Pod pod) {
    return md.getSpec() != null
        && md.getSpec().getRoles() != null
        && md.getSpec().getRoles().stream()
            .anyMatch(
                role -> LabelSelectors.matches(role.getSelector(), pod.getMetadata().getLabels()));
  }

  /**
   * What this policy last concluded about each pod it gated, by pod name: the records on the pods
   * themselves (any number of pods; the status lists at most {@value
   * StatusFactory#MAX_LISTED_PODS}), and for a pod without one the entry the status lists (a pod
   * not written yet, or written by a kvguard that kept its verdicts in the status only).
   */
  private Map<String, VerdictRecord> previousRecords(ModelDeployment md) {
    Map<String, VerdictRecord> byName = new HashMap<>();
    if (md.getStatus() != null && md.getStatus().pods != null) {
      md.getStatus().pods.stream()
          .filter(p -> p.name != null)
          .forEach(p -> byName.put(p.name, PodRecords.of(p)));
    }
    for (Pod pod : SelectionIndex.recordedBy(pods, md)) {
      VerdictRecord record = VerdictRecords.of(pod, md.getMetadata().getName());
      if (record != null) {
        byName.put(pod.getMetadata().getName(), record);
      }
    }
    return byName;
  }

  /**
   * The record that may stand in for a probe of this pod: the pod's own only when the operator's
   * key signed it for this pod and policy (pod metadata is any tenant's to write: one they wrote,
   * altered or copied from another pod counts as none, and the pod is probed), else the entry the
   * status lists (the status subresource is the operator's). A record that is not trusted still
   * marks the pod as one this policy gated (previousRecords).
   */
  private VerdictRecord trustedRecord(ModelDeployment md, Pod pod) {
    String name = md.getMetadata().getName();
    VerdictRecord onPod = signer.trusted(pod, name, VerdictRecords.of(pod, name));
    if (onPod != null || md.getStatus() == null || md.getStatus().pods == null) {
      return onPod;
    }
    return md.getStatus().pods.stream()
        .filter(p -> pod.getMetadata().getName().equals(p.name))
        .findFirst()
        .map(PodRecords::of)
        .orElse(null);
  }

  /**
   * Reconcile again when the next periodic probe falls due (probe completions trigger passes on
   * their own), or soon when a write failed or was dropped: every other pod was written and the
   * status says what was decided, and those pods are decided again. Not by throwing: JOSDK's
   * retries end after a few attempts, and with them this policy's periodic passes, which must go on
   * (re-probes, restarts) however long a webhook keeps refusing one pod.
   */
  private static Duration nextPass(ModelDeployment md, GateStage.Written written, Instant now) {
    Duration period = Duration.ofSeconds(md.getSpec().effectiveProbe().effectivePeriodSeconds());
    Duration next =
        written.kept().stream()
            .map(PodAssessment::nextProbeAt)
            .filter(java.util.Objects::nonNull)
            .map(due -> Duration.between(now, due))
            .min(Duration::compareTo)
            .orElse(period);
    next = next.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : next;
    return !written.unwritten().isEmpty() && next.compareTo(WRITE_RETRY) > 0 ? WRITE_RETRY : next;
  }

  /**
   * The stranded pods of each namespace whose pods are cached (a follower caches none), and
   * everything kept about policies gone from the cache (meters, probe results, decisions: {@link
   * PolicyMemory#forgetPoliciesNotCached}).
   */
  private void countStranded() {
    try {
      IndexerResourceCache<ModelDeployment> policiesNow = policies;
      for (String namespace : pods.sampleWatches(clock.instant())) {
        // Their gates are shut now, not at each policy's next period (60 s by default).
        if (policiesNow != null) {
          policiesNow
              .list(namespace)
              .forEach(md -> probeEvents.probeFinished(ResourceID.fromResource(md)));
        }
      }
      IndexerResourceCache<ModelDeployment> cache = policies;
      EventSourceRetriever<ModelDeployment> sources = podSources;
      if (sources != null) {
        // A replica that listed pods ahead of its passes and does not lead drops here the
        // namespaces whose ModelDeployments are gone (a leader's passes drop them as they end).
        pods.dropUnused(sources, cache);
      }
      Map<String, Long> counts = new HashMap<>();
      for (String namespace : pods.namespaces()) {
        counts.put(
            namespace, StrandedPods.count(pods.list(namespace), cache.list(namespace).toList()));
      }
      observer.strandedPods(counts);
      // A policy whose deletion no pass saw yet loses here whatever was kept about it (issue 28
      // §2: JOSDK runs that pass late, if at all; PolicyMemory).
      if (cache != null) {
        memory.forgetPoliciesNotCached(
            policy -> cache.get(policy).map(md -> md.getMetadata().getUid()).orElse(null));
      }
    } catch (RuntimeException e) {
      // The next count comes all the same: a scheduled task that throws is never run again.
      LOG.warn("cannot count stranded pods", e);
    }
  }

  public void shutdown() {
    strandedCount.shutdownNow();
    pods.close();
    probes.close();
    observer.close();
  }
}

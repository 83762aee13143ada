package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.PodGate;
import io.kvguard.gate.RecordSigner;
import io.kvguard.gate.RecordUpdate;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.GateDecision;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass over a ModelDeployment: select pods → assess each (probe results, never waiting) → arbitrate with
 * other policies → write gates → build status → emit events and metrics on transitions.
 *
 * <p>Every event reaches {@link #reconcile}, deletions too, so kvguard adds its finalizer itself, just before a
 * policy's first write to a pod ({@link PolicyFinalizer}), instead of JOSDK adding it before the first pass and
 * holding every new policy's probes back until the finalizer's watch event returns.
 */
@ControllerConfiguration(name = ModelDeploymentReconciler.NAME, triggerReconcilerOnAllEvents = true)
public final class ModelDeploymentReconciler implements Reconciler<ModelDeployment> {
  public static final String NAME = "modeldeployment";
  private static final Logger LOG = LoggerFactory.getLogger(ModelDeploymentReconciler.class);
  private static final Duration WRITE_RETRY = Duration.ofSeconds(5);

  private final Clock clock;
  private final ProbeEventSource probeEvents = new ProbeEventSource();
  private final ProbeScheduler<ProbeOutcome> scheduler;
  private final ProbeScheduler<RejectionOutcome> rejections;
  private final PodAssessor assessor;
  private final PodGate gate;
  private final GateArbiter arbiter = new GateArbiter();
  private final KeptPods keptPods = new KeptPods();
  /** The generation each policy's last pass saw: a new one re-probes its pods. Removed with the policy. */
  private final Map<ResourceID, Long> generations = new java.util.concurrent.ConcurrentHashMap<>();
  private final Signals signals;
  private final ProbeCredentials credentials;
  private final RecordSigner signer;
  /** Pods of the namespaces that hold a ModelDeployment, and no others (PodCache). */
  private final PodCache pods = new PodCache(pod -> policiesConcerning(pod).stream()
      .map(ResourceID::fromResource).collect(Collectors.toSet()));
  private volatile IndexerResourceCache<ModelDeployment> policies;

  public ModelDeploymentReconciler(EngineProbes probes, RejectionProbe rejectionProbe, ProbeLimits limits,
      PodGate gate, Signals signals, ProbeCredentials credentials, ProbeTrust trust, RecordSigner signer, Clock clock) {
    this.clock = clock;
    this.signer = signer;
    this.gate = gate;
    this.signals = signals;
    this.credentials = credentials;
    this.scheduler = new ProbeScheduler<>(new TenantFairExecutor("kvguard-probe", limits.concurrency(),
        Math.min(limits.concurrency(), limits.concurrencyPerNamespace())), clock, ProbeOutcome::failed,
        probeEvents::probeFinished);
    // One rejection probe per namespace at once: they may take minutes, and a refusing engine answers in
    // milliseconds, so a tenant whose engines hang holds one thread, not the pool.
    this.rejections = new ProbeScheduler<>(new TenantFairExecutor("kvguard-rejection-probe",
        limits.rejectionConcurrency(), 1), clock, RejectionOutcome.Failed::new, probeEvents::probeFinished);
    this.assessor = new PodAssessor(scheduler, rejections, probes, rejectionProbe, signals, credentials, trust,
        this::whyNotProbe);
  }

  /**
   * The ModelDeployments of a namespace as the informer holds them, for the admission webhook (memory only; empty
   * before the informer started). Followers' informers run too, so every replica answers from a warm cache.
   */
  public List<ModelDeployment> cachedPolicies(String namespace) {
    IndexerResourceCache<ModelDeployment> cache = policies;
    return cache == null ? List.of() : cache.list(namespace).toList();
  }

  @Override
  public List<EventSource<?, ModelDeployment>> prepareEventSources(EventSourceContext<ModelDeployment> context) {
    policies = context.getPrimaryCache();
    SelectionIndex.register(policies);
    // Pod informers are started per namespace by the passes that need them (PodCache).
    return List.of(probeEvents);
  }

  @Override
  public UpdateControl<ModelDeployment> reconcile(ModelDeployment md, Context<ModelDeployment> context) {
    try (PodCache.InUse namespacePods = pods.use(md.getMetadata().getNamespace(), context.eventSourceRetriever(),
        policies)) {
      return pass(md, context);
    }
  }

  private UpdateControl<ModelDeployment> pass(ModelDeployment md, Context<ModelDeployment> context) {
    if (context.isPrimaryResourceDeleted() || md.isMarkedForDeletion()) {
      handBack(md, context);
      return UpdateControl.noUpdate();
    }
    Instant now = clock.instant();
    ResourceID self = ResourceID.fromResource(md);
    long generation = md.getMetadata().getGeneration() == null ? 0 : md.getMetadata().getGeneration();
    Long lastGeneration = generations.put(self, generation);
    PodAssessor.Pass pass = new PodAssessor.Pass(now, lastGeneration != null && lastGeneration != generation,
        new java.util.HashSet<>(), new java.util.HashSet<>());
    Optional<String> invalid = SpecProblems.of(md.getSpec());
    signals.live(md);
    Map<String, VerdictRecord> before = previousRecords(md);
    List<PodAssessment> assessments = new ArrayList<>();
    Map<String, List<String>> roleNotes = new LinkedHashMap<>();
    if (invalid.isEmpty()) {
      md.getSpec().getRoles().forEach(role -> roleNotes.put(role.getName(), RoleNotes.of(role)));
      for (PodSelection.Selected selected : PodSelection.firstRoleWins(md.getSpec().getRoles(), role -> selectedPods(md, role))) {
        Pod pod = selected.pod();
        try {
          assessments.add(assessor.assess(md, selected.role(), pod, trustedRecord(md, pod), pass));
        } catch (RuntimeException e) {
          LOG.warn("cannot assess pod {}/{}: {}", pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.toString());
          assessments.add(ShutAssessments.failed(pod, selected.role().getName(), e));
        }
      }
    } else {
      // A spec that cannot be applied says nothing about which pods it means: the pods it gated stay its own,
      // shut, and listed, so neither a typo nor the deletion that follows it opens anything unverified.
      new java.util.TreeMap<>(before).forEach((name, record) -> cachedPod(md.getMetadata().getNamespace(), name)
          .filter(pod -> !PodGate.terminating(pod))
          .ifPresent(pod -> assessments.add(ShutAssessments.heldForInvalidSpec(pod, record, invalid.get()))));
    }
    List<String> conflicts = new ArrayList<>();
    List<String> unwritten = new ArrayList<>();
    scheduler.retain(self, pass.probes());
    rejections.retain(self, pass.rejections());
    List<PodAssessment> kept = gate(md, context, self, assessments, before, now, conflicts, unwritten);
    releaseDeselected(md, context, self, before, kept, unwritten);
    // What this policy remembers of pods it no longer has (deleted, or recreated under a new UID) goes now.
    for (String gone : keptPods.gone(self, kept.stream().map(PodAssessment::podUid).collect(Collectors.toSet()))) {
      scheduler.forget(gone, self);
      rejections.forget(gone, self);
      arbiter.forget(gone, self);
    }
    List<AdvisoryWarnings.Found> advisories = AdvisoryWarnings.of(md, kept);
    advisories.forEach(found -> roleNotes.computeIfAbsent(found.role(), r -> new ArrayList<>()).add(found.note()));
    List<PodVerdictStatus> entries = StatusFactory.entries(kept, before, now);
    ModelDeploymentStatus status = StatusFactory.build(md, entries, roleNotes, invalid, conflicts, now);
    signals.reconciled(md, before, entries, kept);
    signals.advisories(md, advisories);
    Duration next = nextPass(md, kept, now);
    if (!StatusComparison.same(md.getStatus(), status)) {
      writeStatus(md, context, status);
    }
    if (!unwritten.isEmpty() && next.compareTo(WRITE_RETRY) > 0) {
      // Every other pod was written and the status says what was decided; the failed writes (and those dropped
      // because the pod's gate changed under them) are decided again soon. Not by throwing: JOSDK's retries end
      // after a few attempts, and with them this policy's periodic passes, which must go on (re-probes,
      // restarts) however long a webhook keeps refusing one pod.
      return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(WRITE_RETRY);
    }
    return UpdateControl.<ModelDeployment>noUpdate().rescheduleAfter(next);
  }

  private static void writeStatus(ModelDeployment md, Context<ModelDeployment> context, ModelDeploymentStatus status) {
    // Not UpdateControl.patchStatus: without SSA that is a JSON diff against the cached copy, which lags behind
    // our own last write (JOSDK 5 does not cache it), so the patch fails (422) and events repeat. This reads the
    // current resource, writes a JSON patch against it, and puts the answer in the cache, so the next pass reads
    // its own write. (A JSON patch, never server-side apply, as everywhere in kvguard.)
    PrimaryUpdateAndCacheUtils.patchStatusAndCacheResource(md, context, fresh -> {
      fresh.setStatus(status);
      return fresh;
    });
  }

  /**
   * Writes every pod's gate with the decision all policies selecting it agree on; returns the assessments
   * with any conflict noted, and collects the conflicts for the status.
   */
  private List<PodAssessment> gate(ModelDeployment md, Context<ModelDeployment> context, ResourceID self,
      List<PodAssessment> assessments, Map<String, VerdictRecord> before, Instant now, List<String> conflicts,
      List<String> unwritten) {
    boolean audit = md.getSpec() != null
        && md.getSpec().effectiveEnforcement() == io.kvguard.customresource.Enforcement.Audit;
    List<PodAssessment> kept = new ArrayList<>();
    for (PodAssessment assessment : assessments) {
      Set<ResourceID> others = policiesConcerning(assessment.pod()).stream().map(ResourceID::fromResource)
          .filter(id -> !id.equals(self)).collect(Collectors.toSet());
      GateArbiter.Arbitration arbitration;
      synchronized (arbiter.lockFor(assessment.podUid())) {
        arbitration = arbiter.arbitrate(assessment.podUid(), self, GateDecision.of(assessment.verdict(), audit), others);
        // The policy's own verdict goes on the pod with the decision: it survives an operator restart there.
        RecordUpdate record = new RecordUpdate(md.getMetadata().getName(), signer.sign(assessment.pod(),
            md.getMetadata().getName(), PodRecords.of(assessment, before.get(assessment.podName()), now)),
            md.getSpec() != null && md.getSpec().publishesContextLength());
        isolated(md, assessment.pod(), unwritten,
            () -> writeGate(md, context, assessment.role(), assessment.pod(), arbitration.decision(), record));
      }
      if (arbitration.conflicts().isEmpty()) {
        kept.add(assessment);
        continue;
      }
      conflicts.add(assessment.podName() + ": " + String.join(", ", arbitration.conflicts()));
      if (arbitration.changedMine()) {
        // The other policies' pods show a decision that included ours: let them recompute it.
        others.forEach(probeEvents::probeFinished);
      }
      kept.add(withNotes(assessment, arbitration.conflicts()));
    }
    return kept;
  }

  /**
   * A policy being deleted (or, without our finalizer, already gone) hands every pod it selected or listed back
   * open, unless another policy holds it, then lets the deletion finish. Writes nothing a pod already shows, so
   * the deletion event that follows the finalizer's removal repeats it at no cost; and a policy whose finalizer
   * someone removed by hand still hands its pods back if the operator sees it go.
   */
  private void handBack(ModelDeployment md, Context<ModelDeployment> context) {
    ResourceID self = ResourceID.fromResource(md);
    Map<String, Pod> concerned = new LinkedHashMap<>();
    if (SpecProblems.of(md.getSpec()).isEmpty()) {
      for (RoleSpec role : md.getSpec().getRoles()) {
        selectedPods(md, role).forEach(pod -> concerned.put(pod.getMetadata().getName(), pod));
      }
    }
    previousRecords(md).keySet().forEach(name -> cachedPod(md.getMetadata().getNamespace(), name)
        .ifPresent(pod -> concerned.putIfAbsent(name, pod)));
    for (Pod pod : concerned.values()) {
      try {
        GateDecision removed = GateDecision.policyRemoved(md.getMetadata().getName());
        if (!release(md, context, self, pod, removed)) {
          // The gate changed under the write: hand back what the pod shows now (this decision needs no verdict).
          Optional<Pod> fresh = gate.reread(pod);
          if (fresh.isPresent() && !release(md, context, self, fresh.get(), removed)) {
            throw new IllegalStateException("the pod's gate kept changing under the hand-back");
          }
        }
      } catch (RuntimeException e) {
        // Never keep the finalizer for a pod: when a namespace is deleted, its policies go with the RoleBinding
        // that lets kvguard write its pods (403) and with the pods themselves (404, terminating), and a kept
        // finalizer would hold the whole namespace in Terminating. Said loudly instead; the pod keeps its gate.
        signals.handBackFailed(md, pod, e);
      }
    }
    scheduler.forgetAll(self);
    rejections.forgetAll(self);
    generations.remove(self);
    keptPods.forget(self);
    credentials.forget(self);
    signals.forget(md);
    if (!context.isPrimaryResourceDeleted()) {
      PolicyFinalizer.release(context.getClient(), md);
    }
  }

  /**
   * A pod that left this policy (deleted policy or changed labels) is handed back open, unless another policy holds
   * it. False when the write was dropped because the pod's gate changed after it was read.
   */
  private boolean release(ModelDeployment md, Context<ModelDeployment> context, ResourceID self, Pod pod,
      GateDecision released) {
    if (PodGate.terminating(pod)) {
      // A pod being deleted needs nothing back; two writes to it would be wasted (often answered 404 or 422).
      forgetPod(self, pod.getMetadata().getUid());
      return true;
    }
    boolean written = true;
    Set<ResourceID> others = policiesConcerning(pod).stream().map(ResourceID::fromResource)
        .filter(id -> !id.equals(self)).collect(Collectors.toSet());
    RecordUpdate letGo = RecordUpdate.remove(md.getMetadata().getName(),
        md.getSpec() != null && md.getSpec().publishesContextLength());
    synchronized (arbiter.lockFor(pod.getMetadata().getUid())) {
      arbiter.forget(pod.getMetadata().getUid(), self);
      // Handed back open when no other policy holds the pod; either way this policy's record leaves it, so the
      // pod is no longer counted as this policy's (the others then decide without it).
      written = writeGate(md, context, null, pod, others.isEmpty() ? released : null, letGo);
    }
    others.forEach(probeEvents::probeFinished);
    forgetPod(self, pod.getMetadata().getUid());
    return written;
  }

  private void forgetPod(ResourceID self, String podUid) {
    scheduler.forget(podUid, self);
    rejections.forget(podUid, self);
  }

  private void releaseDeselected(ModelDeployment md, Context<ModelDeployment> context, ResourceID self,
      Map<String, VerdictRecord> before, List<PodAssessment> kept, List<String> unwritten) {
    Set<String> selected = kept.stream().map(PodAssessment::podName).collect(Collectors.toSet());
    for (String name : before.keySet()) {
      if (!selected.contains(name)) {
        signals.forgetPod(md, name, before.get(name).role());
        cachedPod(md.getMetadata().getNamespace(), name).ifPresent(pod -> isolated(md, pod, unwritten,
            () -> release(md, context, self, pod,
                GateDecision.released("no longer selected by ModelDeployment " + md.getMetadata().getName()))));
      }
    }
  }

  /**
   * One pod's write failing (a webhook refusing it, retries used up) must not leave the others unwritten; a write
   * dropped because the pod's gate changed under it is decided again too.
   */
  private void isolated(ModelDeployment md, Pod pod, List<String> unwritten, java.util.function.BooleanSupplier write) {
    try {
      if (!write.getAsBoolean()) {
        unwritten.add(pod.getMetadata().getName());
      }
    } catch (RuntimeException e) {
      signals.gateWriteFailed(md, pod, e);
      unwritten.add(pod.getMetadata().getName());
    }
  }

  /**
   * Writes the decision (null: leaves condition and label) and the policy's record; false when the write was dropped
   * because the pod's gate changed after it was read.
   */
  private boolean writeGate(ModelDeployment md, Context<ModelDeployment> context, String role, Pod pod,
      GateDecision decision, RecordUpdate record) {
    Boolean wasOpen = GateState.conditionOpen(pod);
    if (decision != null && wasOpen == null && decision.reason() == io.kvguard.verdict.GateReason.AwaitingProbe
        && !GateState.labelled(pod)) {
      // A pod that never had a kvguard condition or label is already shut (its readiness gate has no
      // condition, routers see no label): writing "awaiting" would only double the writes of every new pod.
      return true;
    }
    // Whatever kvguard writes to a pod, deleting the policy must be able to undo, so the finalizer goes on first
    // (a policy already gone is handing its pods back, which needs no undoing).
    Runnable beforeWrite = context.isPrimaryResourceDeleted() ? () -> { } : () -> PolicyFinalizer.ensure(context, md);
    // Each write is cached as it is accepted, so the next pass sees it before the watch delivers it, and the
    // watch event of the condition write (arriving before the label write) is known as ours and triggers no pass.
    PodGate.Outcome outcome = gate.apply(pod, decision, record, beforeWrite,
        pods::written);
    if (outcome.conditionWritten() && role != null && decision != null
        && (wasOpen == null || wasOpen != decision.open())) {
      signals.gateFlipped(md, role, decision.open());
    }
    return !outcome.superseded();
  }

  private static PodAssessment withNotes(PodAssessment assessment, List<String> extra) {
    List<String> notes = new ArrayList<>(assessment.notes());
    extra.forEach(conflict -> notes.add("ConflictingPolicies: " + conflict));
    return new PodAssessment(assessment.pod(), assessment.role(), assessment.labelOnly(), assessment.containerID(),
        assessment.restartCount(), assessment.verdict(), assessment.observation(), notes, assessment.nextProbeAt(),
        assessment.refusal());
  }

  /** The pods a role selects, leaving out those being deleted: nothing is probed or written for them. */
  private List<Pod> selectedPods(ModelDeployment md, RoleSpec role) {
    return SelectionIndex.selected(pods, md.getMetadata().getNamespace(), role.getSelector()).stream()
        .filter(pod -> !PodGate.terminating(pod)).toList();
  }

  private Optional<Pod> cachedPod(String namespace, String name) {
    return pods.get(new ResourceID(name, namespace));
  }

  /** Every policy in the pod's namespace that selects it now, recorded a verdict on it, or lists it in its status. */
  private List<ModelDeployment> policiesConcerning(Pod pod) {
    String name = pod.getMetadata().getName();
    Set<String> recorded = VerdictRecords.of(pod).keySet();
    return SelectionIndex.candidatePolicies(policies, pod).stream()
        .filter(md -> md.getMetadata().getDeletionTimestamp() == null)
        .filter(md -> selects(md, pod) || recorded.contains(md.getMetadata().getName())
            || (md.getStatus() != null && md.getStatus().pods != null
            && md.getStatus().pods.stream().anyMatch(p -> name.equals(p.name))))
        .toList();
  }

  /**
   * Asked just before a queued probe is sent: the pod must still be the same pod (UID), at the same IP, on the
   * pod network, and selected by a policy that is not being deleted. Otherwise the probe is not sent.
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
    boolean selected = SelectionIndex.candidatePolicies(policies, pod).stream()
        .anyMatch(md -> md.getMetadata().getDeletionTimestamp() == null && selects(md, pod));
    return selected ? Optional.empty() : Optional.of("no policy selects pod " + namespace + "/" + name + " any more");
  }

  private static boolean selects(ModelDeployment md, Pod pod) {
    return md.getSpec() != null && md.getSpec().getRoles() != null && md.getSpec().getRoles().stream()
        .anyMatch(role -> LabelSelectors.matches(role.getSelector(), pod.getMetadata().getLabels()));
  }

  /**
   * What this policy last concluded about each pod it gated, by pod name: the records on the pods themselves
   * (any number of pods; the status lists at most {@value StatusFactory#MAX_LISTED_PODS}), and for a pod without
   * one the entry the status lists (a pod not written yet, or written by a kvguard that kept its verdicts in
   * the status only).
   */
  private Map<String, VerdictRecord> previousRecords(ModelDeployment md) {
    Map<String, VerdictRecord> byName = new HashMap<>();
    if (md.getStatus() != null && md.getStatus().pods != null) {
      md.getStatus().pods.stream().filter(p -> p.name != null).forEach(p -> byName.put(p.name, PodRecords.of(p)));
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
   * The record that may stand in for a probe of this pod: the pod's own only when the operator's key signed it
   * for this pod and policy (pod metadata is any tenant's to write: one they wrote, altered or copied from another
   * pod counts as none, and the pod is probed), else the entry the status lists (the status subresource is the
   * operator's). A record that is not trusted still marks the pod as one this policy gated (previousRecords).
   */
  private VerdictRecord trustedRecord(ModelDeployment md, Pod pod) {
    String name = md.getMetadata().getName();
    VerdictRecord onPod = signer.trusted(pod, name, VerdictRecords.of(pod, name));
    if (onPod != null || md.getStatus() == null || md.getStatus().pods == null) {
      return onPod;
    }
    return md.getStatus().pods.stream().filter(p -> pod.getMetadata().getName().equals(p.name)).findFirst()
        .map(PodRecords::of).orElse(null);
  }

  /** Reconcile again when the next periodic probe falls due; probe completions trigger passes on their own. */
  private static Duration nextPass(ModelDeployment md, List<PodAssessment> assessments, Instant now) {
    Duration period = Duration.ofSeconds(md.getSpec().effectiveProbe().effectivePeriodSeconds());
    Duration next = assessments.stream().map(PodAssessment::nextProbeAt).filter(java.util.Objects::nonNull)
        .map(due -> Duration.between(now, due)).min(Duration::compareTo).orElse(period);
    return next.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : next;
  }

  public void shutdown() {
    scheduler.close();
    rejections.close();
    signals.close();
    credentials.close();
  }
}

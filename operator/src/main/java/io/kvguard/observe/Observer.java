package io.kvguard.observe;

import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.ProbeOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything a user watches: events on verdict transitions, metrics, and one log line per change.
 * Fed once per pass ({@link #report}), when a pass starts ({@link #passStarting}), when a policy
 * goes ({@link #policyGone}), and by probes as they finish on their own threads ({@link #probed},
 * {@link #rejectionProbed}).
 */
public final class Observer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Observer.class);
  private static final Set<String> WARNINGS =
      Set.of(
          GateReason.PoolTooSmall.name(),
          GateReason.EngineContextTooShort.name(),
          GateReason.EngineContextExceedsPool.name(),
          GateReason.ProbeFailed.name(),
          GateReason.RejectionPathUnsafe.name(),
          GateReason.KnownUnsafeEngine.name(),
          GateReason.EngineVersionTooOld.name(),
          GateReason.EngineVersionUnknown.name(),
          GateReason.RejectionProbeInconclusive.name());

  /** Event reasons of a ModelDeployment whose stored spec or status kvguard cannot read. */
  public static final String UNREADABLE_SPEC = "UnreadableSpec";

  public static final String UNREADABLE_STATUS = "UnreadableStatus";

  private static final Set<String> PASSES =
      Set.of(GateReason.PoolSufficient.name(), GateReason.ContextLengthSufficient.name());

  /** {@link PodVerdictStatus#gating} of a pod whose spec lacks the readiness gate. */
  private static final String LABEL_ONLY = "LabelOnly";

  private final EventRecorder events;
  private final KvguardMetrics metrics;

  /**
   * The reason last announced per (ModelDeployment uid, pod): a pass may start from a cached status
   * that predates the previous pass's write, and must not announce the same transition twice.
   */
  private final Map<String, String> announced = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The pods already warned about, per (ModelDeployment uid, role, advisory): each is announced
   * once.
   */
  private final Map<String, java.util.Set<String>> warnedPods =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** Roles already announced as sending their bearer token over plain HTTP, by policy UID. */
  private final Map<String, java.util.Set<String>> clearTextWarned =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The label-only pods already announced, per ModelDeployment uid: each is named in a Warning
   * event once.
   */
  private final Map<String, java.util.Set<String>> labelOnlyAnnounced =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The (role, advisory) gauges a ModelDeployment has, per uid, so those that no longer apply are
   * removed.
   */
  private final Map<String, java.util.Set<String>> advisoryGauges =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The ModelDeployments not deleted, by UID (with where they live, so {@link
   * #forgetPoliciesNotCached} can forget one whose deletion no pass saw). Meters are recorded only
   * for these, under {@link #meters}' read lock, so a probe that finishes after its policy was
   * deleted cannot bring the policy's meters back for good.
   */
  private final Map<String, Named> live = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Recording a meter holds the read lock ({@link #recordIfLive}), forgetting a policy (and
   * changing {@link #gone} or {@link #unreadable}) the write lock: a deleted policy's meters cannot
   * be recorded again once removed, while recordings never wait for each other. ({@link
   * #passStarting} adds to {@link #live}, a concurrent map, under the read lock: it reads {@link
   * #gone}, which changes only under the write lock.) One monitor for both made the 32 probe
   * threads and the passes queue behind each other at start (JFR of a start at N = 1,000: seconds
   * of monitor waits in {@link #probed} and {@link #reconciled}, issue 28 §5).
   */
  private final java.util.concurrent.locks.ReentrantReadWriteLock meters =
      new java.util.concurrent.locks.ReentrantReadWriteLock();

  /** Where a live ModelDeployment is. */
  private record Named(String namespace, String name) {}

  /**
   * UIDs of the ModelDeployments forgotten last (a UID is never reused): a pass that was already
   * under way when its policy went cannot make it live again. Bounded, oldest first out.
   */
  private final Set<String> gone =
      java.util.Collections.newSetFromMap(
          new java.util.LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > 10_000;
            }
          });

  /**
   * UIDs of the ModelDeployments kvguard cannot read, per namespace (the gauge counts them), and
   * what was last said about each: a policy read again every pass is announced once per problem.
   */
  private final Map<String, Set<String>> unreadable =
      new java.util.concurrent.ConcurrentHashMap<>();

  private final Map<String, String> unreadableTold = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * @param events where transitions are announced (the observer closes it)
   */
  public Observer(EventRecorder events, KvguardMetrics metrics) {
    this.events = events;
    this.metrics = metrics;
  }

  /**
   * A pass of the policy starts: it exists, so its meters may be recorded (before the pass's probes
   * can finish and record theirs).
   */
  public void passStarting(ModelDeployment md) {
    // The read lock suffices: gone changes only under the write lock, and live is concurrent.
    meters.readLock().lock();
    try {
      if (!gone.contains(md.getMetadata().getUid())) {
        live.put(
            md.getMetadata().getUid(),
            new Named(md.getMetadata().getNamespace(), md.getMetadata().getName()));
      }
    } finally {
      meters.readLock().unlock();
    }
  }

  /**
   * Runs {@code record} under the read lock if the policy is live (not forgotten): a pass that
   * overlapped the policy's deletion, or a probe that ended after it, must not bring its meters
   * back once they were removed. False when it is not live.
   */
  private boolean recordIfLive(ModelDeployment md, Runnable record) {
    meters.readLock().lock();
    try {
      if (!live.containsKey(md.getMetadata().getUid())) {
        return false;
      }
      record.run();
      return true;
    } finally {
      meters.readLock().unlock();
    }
  }

  /**
   * Names the parts of a ModelDeployment kvguard could not read (issue 29): a WARN log line and a
   * Warning Event with the namespace, name and failing field, once per problem, and the namespace's
   * count in {@code kvguard_unreadable_modeldeployments} for as long as it lasts. The reconciler
   * applies nothing of an unreadable spec (its pods stay shut) and rewrites an unreadable status.
   */
  public void readability(ModelDeployment md) {
    String uid = md.getMetadata().getUid();
    String namespace = md.getMetadata().getNamespace();
    List<io.kvguard.customresource.Unreadable> failures = new java.util.ArrayList<>();
    if (md.getSpec() != null) {
      md.getSpec().unreadable().ifPresent(failures::add);
    }
    if (md.getStatus() != null) {
      md.getStatus().unreadable().ifPresent(failures::add);
    }
    boolean counted;
    meters.readLock().lock();
    try {
      if (!live.containsKey(uid)) {
        return;
      }
      counted = unreadable.getOrDefault(namespace, Set.of()).contains(uid);
    } finally {
      meters.readLock().unlock();
    }
    if (counted == failures.isEmpty()) {
      meters.writeLock().lock();
      try {
        if (live.containsKey(uid)) {
          countUnreadable(namespace, uid, !failures.isEmpty());
        }
      } finally {
        meters.writeLock().unlock();
      }
    }
    String problems =
        failures.stream()
            .map(io.kvguard.customresource.Unreadable::describe)
            .collect(java.util.stream.Collectors.joining("; "));
    if (failures.isEmpty()) {
      unreadableTold.remove(uid);
      return;
    }
    if (problems.equals(unreadableTold.put(uid, problems))) {
      return;
    }
    for (io.kvguard.customresource.Unreadable failure : failures) {
      boolean spec = failure.field().startsWith("spec");
      String message =
          "cannot read "
              + failure.field()
              + " of ModelDeployment "
              + namespace
              + "/"
              + md.getMetadata().getName()
              + ": "
              + failure.problem()
              + (spec
                  ? "; kvguard applies nothing of this spec and the pods it gated stay shut until"
                      + " it is fixed"
                  : "; kvguard treats the status as absent and writes it anew");
      LOG.warn(message);
      events.announce(
          InvolvedObject.of(md),
          "Warning",
          spec ? UNREADABLE_SPEC : UNREADABLE_STATUS,
          "is unreadable",
          List.of(new Announcement(message, message)));
    }
  }

  private void countUnreadable(String namespace, String uid, boolean isUnreadable) {
    Set<String> uids = unreadable.computeIfAbsent(namespace, n -> new java.util.HashSet<>());
    boolean changed = isUnreadable ? uids.add(uid) : uids.remove(uid);
    if (uids.isEmpty()) {
      unreadable.remove(namespace);
    }
    if (changed) {
      metrics.unreadableModelDeployments(namespace, uids.size());
    }
  }

  /**
   * Announces what one pass did: write failures, gate flips, released pods, verdicts, engine
   * advisories.
   */
  public void report(PassReport report) {
    ModelDeployment md = report.md();
    report.writeFailures().forEach(failure -> gateWriteFailed(md, failure.pod(), failure.error()));
    report.flips().forEach(flip -> gateFlipped(md, flip.role(), flip.open()));
    report.released().forEach(released -> forgetPod(md, released.pod(), released.role()));
    reconciled(md, report.before(), report.entries(), report.pods());
    advisories(md, report.advisories());
    labelOnly(md, report.entries());
  }

  /**
   * Pods whose spec lacks the readiness gate (issue 18 §1): only the routing label holds them back,
   * so a Service or InferencePool that does not select on it routes to them. A gauge per role
   * (every pass), and a Warning event naming each such pod once, with the fix: readinessGates
   * cannot change on a pod, a new pod gets the gate.
   */
  private void labelOnly(ModelDeployment md, List<PodVerdictStatus> entries) {
    String uid = md.getMetadata().getUid();
    boolean isLive =
        recordIfLive(
            md,
            () -> {
              for (RoleSpec role :
                  md.getSpec() == null || md.getSpec().getRoles() == null
                      ? List.<RoleSpec>of()
                      : md.getSpec().getRoles()) {
                metrics.labelOnlyPods(
                    KvguardMetrics.roleTags(
                        md.getMetadata().getNamespace(),
                        md.getMetadata().getName(),
                        role.getName()),
                    entries.stream()
                        .filter(e -> role.getName().equals(e.role) && LABEL_ONLY.equals(e.gating))
                        .count());
              }
            });
    if (!isLive) {
      return;
    }
    java.util.Set<String> told =
        labelOnlyAnnounced.computeIfAbsent(
            uid, k -> java.util.concurrent.ConcurrentHashMap.newKeySet());
    java.util.Set<String> current = new java.util.HashSet<>();
    List<Announcement> fresh = new java.util.ArrayList<>();
    for (PodVerdictStatus pod : entries) {
      if (LABEL_ONLY.equals(pod.gating)) {
        current.add(pod.name);
        if (told.add(pod.name)) {
          fresh.add(
              new Announcement(
                  "pod "
                      + pod.name
                      + " (role "
                      + pod.role
                      + ") has no kvguard.io/pool-verified"
                      + " readiness gate: only the kvguard.io/verified label holds it back (a Service or InferencePool that"
                      + " does not select on the label routes to it once its own probe passes). readinessGates cannot change"
                      + " on a pod: a rollout restart of its owner recreates it with the gate (the webhook adds it in"
                      + " namespaces labelled kvguard.io/readiness-gate-injection=enabled)",
                  pod.name + " (role " + pod.role + ")"));
        }
      }
    }
    // A pod that left (or was recreated with the gate) is announced again should it come back
    // without one.
    told.retainAll(current);
    events.announce(
        InvolvedObject.of(md),
        "Warning",
        "LabelOnlyPods",
        "are held back by the kvguard.io/verified label only (no readiness gate; a rollout restart adds it)",
        fresh);
  }

  /**
   * A deleted policy let go without its namespace's pods as they are: kvguard has been refused
   * their LIST (HTTP 403) since {@code since}, its RoleBinding gone (with the namespace, say).
   * Every pod it gated that kvguard does not know of keeps the gate it had; said once, in the log
   * and an event, as for a pod whose hand-back was refused.
   */
  public void handBackUnlisted(ModelDeployment md, java.time.Instant since) {
    String namespace = md.getMetadata().getNamespace();
    LOG.warn(
        "cannot list the pods of namespace {} (HTTP 403 since {}) to hand them back from deleted"
            + " ModelDeployment {}; it is let go, and each pod it gated that kvguard cannot see keeps"
            + " its gate",
        namespace,
        since,
        md.getMetadata().getName());
    String why =
        "the pods of namespace "
            + namespace
            + " could not be listed (HTTP 403 since "
            + since
            + "); the ModelDeployment is let go, and each pod it gated that kvguard cannot see"
            + " keeps the gate it had: check kvguard's RoleBinding there, or remove the condition"
            + " kvguard.io/pool-verified and the label kvguard.io/verified by hand";
    events.announce(
        InvolvedObject.of(md),
        "Warning",
        "HandBackFailed",
        "could not be handed back",
        List.of(new Announcement(why, why)));
  }

  /**
   * The ModelDeployment is gone: the pods it could not hand back are said loudly, and everything
   * kept about it (announced transitions, warned pods, its meters) goes.
   */
  public void policyGone(ModelDeployment md, List<PassReport.WriteFailure> handBackFailures) {
    handBackFailures.forEach(failure -> handBackFailed(md, failure.pod(), failure.error()));
    forget(md);
  }

  /**
   * @param before what the policy last concluded per pod (records on the pods, or status entries)
   * @param entries this pass's conclusion for every pod (the status lists only some of them)
   */
  private void reconciled(
      ModelDeployment md,
      Map<String, io.kvguard.gate.VerdictRecord> before,
      List<PodVerdictStatus> entries,
      List<PassReport.PodFigures> judged) {
    String namespace = md.getMetadata().getNamespace();
    String name = md.getMetadata().getName();
    recordIfLive(
        md,
        () -> {
          if (md.getSpec().getContextWindow() != null) {
            metrics.contextWindow(namespace, name, md.getSpec().getContextWindow());
          }
          for (PassReport.PodFigures pod : judged) {
            metrics.pod(
                KvguardMetrics.podTags(namespace, name, pod.role(), pod.pod()),
                pod.poolTokens(),
                pod.verified());
          }
        });
    Map<String, List<Announcement>> refusals = new java.util.LinkedHashMap<>();
    List<Announcement> verified = new java.util.ArrayList<>();
    for (PodVerdictStatus pod : entries) {
      io.kvguard.gate.VerdictRecord previous = before.get(pod.name);
      String key = md.getMetadata().getUid() + "/" + pod.name;
      String last = announced.getOrDefault(key, previous == null ? null : previous.reason());
      if (Objects.equals(last, pod.reason)) {
        continue;
      }
      announced.put(key, pod.reason);
      if (WARNINGS.contains(pod.reason)) {
        refusals
            .computeIfAbsent(pod.reason, reason -> new java.util.ArrayList<>())
            .add(
                new Announcement(
                    "pod " + pod.name + " (role " + pod.role + "): " + pod.message,
                    pod.name + " (role " + pod.role + "): " + pod.message));
      } else if (PASSES.contains(pod.reason)) {
        verified.add(
            new Announcement(
                "pod " + pod.name + " (role " + pod.role + "): " + pod.message,
                pod.name + " (role " + pod.role + ", KV pool " + pod.poolTokens + " tokens)"));
      }
      LOG.info(
          "verdict modeldeployment={}/{} pod={} role={} verdict={} reason={} poolTokens={} engineContextTokens={}",
          namespace,
          name,
          pod.name,
          pod.role,
          pod.verdict,
          pod.reason,
          pod.poolTokens,
          pod.engineContextTokens);
    }
    // One Event per reason: the pods of this pass that turned to it share one write, and later
    // passes add to the same Event's count (a burst of a thousand failures is a few writes, not a
    // thousand objects).
    InvolvedObject involved = InvolvedObject.of(md);
    refusals.forEach(
        (reason, pods) -> events.announce(involved, "Warning", reason, "turned " + reason, pods));
    events.announce(involved, "Normal", "PoolVerified", "verified", verified);
  }

  /**
   * Engine advisories that only warn: a gauge per role and advisory (pods it applies to in this
   * pass), and one Warning event the first time an advisory applies to a pod (a pod between probes,
   * say restarting, is not announced again when it comes back); gauges of advisories that no longer
   * apply go.
   */
  private void advisories(ModelDeployment md, List<PassReport.Advisory> found) {
    String uid = md.getMetadata().getUid();
    if (!recordIfLive(md, () -> gaugeAdvisories(md, found))) {
      return;
    }
    List<Announcement> fresh = new java.util.ArrayList<>();
    for (PassReport.Advisory warning : found) {
      java.util.Set<String> pods =
          warnedPods.computeIfAbsent(
              uid + "/" + warning.role() + "/" + warning.advisory(),
              k -> java.util.concurrent.ConcurrentHashMap.newKeySet());
      for (String pod : warning.pods()) {
        if (pods.add(pod)) {
          fresh.add(
              new Announcement(
                  "pod "
                      + pod
                      + " (role "
                      + warning.role()
                      + "): engine advisory "
                      + warning.advisory()
                      + ": "
                      + warning.message(),
                  pod + " (role " + warning.role() + ", advisory " + warning.advisory() + ")"));
        }
      }
    }
    events.announce(
        InvolvedObject.of(md),
        "Warning",
        "EngineAdvisoryWarning",
        "are affected by an engine advisory",
        fresh);
  }

  /** A gauge per role and advisory with the pods it applies to; those that no longer apply go. */
  private void gaugeAdvisories(ModelDeployment md, List<PassReport.Advisory> found) {
    String uid = md.getMetadata().getUid();
    java.util.Set<String> current = new java.util.HashSet<>();
    for (PassReport.Advisory warning : found) {
      current.add(warning.role() + "/" + warning.advisory());
      metrics.advisoryWarning(
          md.getMetadata().getNamespace(),
          md.getMetadata().getName(),
          warning.role(),
          warning.advisory(),
          warning.pods().size());
    }
    java.util.Set<String> gauged =
        advisoryGauges.computeIfAbsent(
            uid, k -> java.util.concurrent.ConcurrentHashMap.newKeySet());
    for (String stale : List.copyOf(gauged)) {
      if (!current.contains(stale)) {
        String[] roleAndAdvisory = stale.split("/", 2);
        metrics.forgetAdvisoryWarning(
            md.getMetadata().getNamespace(),
            md.getMetadata().getName(),
            roleAndAdvisory[0],
            roleAndAdvisory[1]);
        gauged.remove(stale);
      }
    }
    gauged.addAll(current);
  }

  /** A probe finished (on its own thread): its duration and whether it failed. */
  public void probed(ModelDeployment md, RoleSpec role, ProbeOutcome outcome, Duration took) {
    boolean failed = outcome instanceof ProbeOutcome.Failed;
    recordIfLive(
        md,
        () ->
            metrics.probe(
                KvguardMetrics.roleTags(
                    md.getMetadata().getNamespace(), md.getMetadata().getName(), role.getName()),
                role.getEngine().wireName(),
                took,
                failed));
    if (failed) {
      LOG.debug(
          "probe failed modeldeployment={}/{} role={} cause={}",
          md.getMetadata().getNamespace(),
          md.getMetadata().getName(),
          role.getName(),
          ((ProbeOutcome.Failed) outcome).cause());
    }
  }

  /**
   * A rejection probe finished (on its own thread): how the engine answered the over-limit prompt.
   */
  public void rejectionProbed(
      ModelDeployment md, RoleSpec role, io.kvguard.verdict.RejectionOutcome outcome) {
    String result =
        outcome instanceof io.kvguard.verdict.RejectionOutcome.Refused
            ? "refused"
            : outcome instanceof io.kvguard.verdict.RejectionOutcome.Answered
                ? "answered"
                : outcome instanceof io.kvguard.verdict.RejectionOutcome.Inconclusive
                    ? "inconclusive"
                    : "failed";
    recordIfLive(
        md,
        () ->
            metrics.rejectionProbe(
                KvguardMetrics.roleTags(
                    md.getMetadata().getNamespace(), md.getMetadata().getName(), role.getName()),
                role.getEngine().wireName(),
                result));
  }

  /** A gate write the API server refused; the gate stays as it was and the pass comes again. */
  private void gateWriteFailed(
      ModelDeployment md, io.fabric8.kubernetes.api.model.Pod pod, RuntimeException error) {
    LOG.warn(
        "cannot write the gate of pod {}/{}: {}",
        pod.getMetadata().getNamespace(),
        pod.getMetadata().getName(),
        error.toString());
    recordIfLive(
        md,
        () ->
            metrics.gateWriteFailure(md.getMetadata().getNamespace(), md.getMetadata().getName()));
  }

  /**
   * A pod the deleted policy could not hand back (its namespace going, its RoleBinding gone, a
   * webhook): the policy is let go regardless, so the pod keeps the gate it had. Said in the log
   * and an event (which a namespace being deleted may refuse too); while the pod lives on with that
   * gate, kvguard_stranded_pods counts it ({@link #strandedPods}). Not a counter per policy: that
   * kept one series per deleted policy, forever (issue 28 §2).
   */
  private void handBackFailed(
      ModelDeployment md, io.fabric8.kubernetes.api.model.Pod pod, RuntimeException error) {
    String code =
        error instanceof io.fabric8.kubernetes.client.KubernetesClientException k && k.getCode() > 0
            ? "HTTP " + k.getCode()
            : error.getClass().getSimpleName();
    LOG.warn(
        "cannot hand pod {}/{} back from deleted ModelDeployment {} ({}); the finalizer is removed anyway and the"
            + " pod keeps its gate: {}",
        pod.getMetadata().getNamespace(),
        pod.getMetadata().getName(),
        md.getMetadata().getName(),
        code,
        error.toString());
    String why =
        ": the gate could not be handed back ("
            + code
            + "); the ModelDeployment is deleted anyway and the pod"
            + " keeps the gate it had: remove the condition kvguard.io/pool-verified and the label kvguard.io/verified by"
            + " hand if the pod stays";
    events.announce(
        InvolvedObject.of(md),
        "Warning",
        "HandBackFailed",
        "could not be handed back",
        List.of(
            new Announcement(
                "pod " + pod.getMetadata().getName() + why, pod.getMetadata().getName() + why)));
  }

  /**
   * A namespace's probes now counted as hung (running past the threshold, on the hung budget); 0
   * drops its series.
   */
  public void hungProbes(String namespace, int hung) {
    metrics.hungProbes(namespace, hung);
  }

  /**
   * A namespace's rejection probes (and proofs through its router) now counted as hung, on the
   * rejection probes' own hung budget; 0 drops its series.
   */
  public void hungRejectionProbes(String namespace, int hung) {
    metrics.hungRejectionProbes(namespace, hung);
  }

  /**
   * The stranded pods of every namespace whose pods are cached, recounted from the caches: a
   * namespace counted 0, or no longer cached (no ModelDeployment left there), loses its series.
   */
  public void strandedPods(Map<String, Long> byNamespace) {
    meters.writeLock().lock();
    try {
      for (String namespace : metrics.strandedNamespaces()) {
        if (!byNamespace.containsKey(namespace)) {
          metrics.strandedPods(namespace, 0);
        }
      }
      byNamespace.forEach(metrics::strandedPods);
    } finally {
      meters.writeLock().unlock();
    }
  }

  private void gateFlipped(ModelDeployment md, String role, boolean open) {
    recordIfLive(
        md,
        () ->
            metrics.gateTransition(
                KvguardMetrics.roleTags(
                    md.getMetadata().getNamespace(), md.getMetadata().getName(), role),
                open));
  }

  /**
   * One Warning event (reason {@code CredentialsInClearText}) the first time a role of the policy
   * sends its bearer token over plain HTTP; said again only after the operator restarts or the
   * policy is recreated. The status notes it on every pass (roles[].notes).
   */
  public void credentialsInClear(ModelDeployment md, List<String> roles) {
    java.util.Set<String> warned =
        clearTextWarned.computeIfAbsent(
            md.getMetadata().getUid(), k -> java.util.concurrent.ConcurrentHashMap.newKeySet());
    List<Announcement> fresh = new java.util.ArrayList<>();
    for (String role : roles) {
      if (warned.add(role)) {
        fresh.add(
            new Announcement(
                "role "
                    + role
                    + ": probe.authSecretRef is sent over plain HTTP; set the role's scheme: https",
                "role " + role));
      }
    }
    events.announce(
        InvolvedObject.of(md),
        "Warning",
        CREDENTIALS_IN_CLEAR,
        "send the engine's API key over plain HTTP",
        fresh);
  }

  /** Event reason (public API). */
  public static final String CREDENTIALS_IN_CLEAR = "CredentialsInClearText";

  private void forgetPod(ModelDeployment md, String pod, String role) {
    announced.remove(md.getMetadata().getUid() + "/" + pod);
    warnedPods.forEach(
        (key, pods) -> {
          if (key.startsWith(md.getMetadata().getUid() + "/")) {
            pods.remove(pod);
          }
        });
    if (role != null) {
      metrics.forgetPod(
          KvguardMetrics.podTags(
              md.getMetadata().getNamespace(), md.getMetadata().getName(), role, pod));
    }
  }

  private void forget(ModelDeployment md) {
    forget(md.getMetadata().getNamespace(), md.getMetadata().getName(), md.getMetadata().getUid());
  }

  /**
   * Everything kept about the policy with this UID goes, and nothing is recorded for it again;
   * {@code name} is null when another policy holds its name now: the meters, named by namespace and
   * name, are that one's and stay.
   */
  private void forget(String namespace, String name, String uid) {
    meters.writeLock().lock();
    try {
      live.remove(uid);
      forgetKept(uid);
      if (name != null) {
        metrics.forgetModelDeployment(namespace, name);
      }
    } finally {
      meters.writeLock().unlock();
    }
  }

  /**
   * What is kept about the policy with this UID, except its meters (named by name). Called under
   * the write lock.
   */
  private void forgetKept(String uid) {
    gone.add(uid);
    for (Map.Entry<String, Set<String>> counted : List.copyOf(unreadable.entrySet())) {
      if (counted.getValue().contains(uid)) {
        countUnreadable(counted.getKey(), uid, false);
      }
    }
    unreadableTold.remove(uid);
    announced.keySet().removeIf(key -> key.startsWith(uid + "/"));
    warnedPods.keySet().removeIf(key -> key.startsWith(uid + "/"));
    advisoryGauges.remove(uid);
    labelOnlyAnnounced.remove(uid);
    clearTextWarned.remove(uid);
    events.forget(uid);
  }

  /**
   * The UIDs of the ModelDeployments something is kept about here: live ones, and what passes
   * recorded per UID (for the sweep of forgotten ones, and tests: nothing outlives its policy).
   */
  public Set<String> uids() {
    meters.writeLock().lock();
    try {
      return uidsKept();
    } finally {
      meters.writeLock().unlock();
    }
  }

  private Set<String> uidsKept() {
    Set<String> uids = new java.util.TreeSet<>(live.keySet());
    java.util.function.Function<String, String> uidOf = key -> key.substring(0, key.indexOf('/'));
    announced.keySet().stream().map(uidOf).forEach(uids::add);
    warnedPods.keySet().stream().map(uidOf).forEach(uids::add);
    uids.addAll(advisoryGauges.keySet());
    uids.addAll(labelOnlyAnnounced.keySet());
    uids.addAll(clearTextWarned.keySet());
    uids.addAll(unreadableTold.keySet());
    unreadable.values().forEach(uids::addAll);
    return uids;
  }

  /**
   * Forgets every policy whose meters are recorded but which the policy cache no longer holds under
   * the same UID (issue 28 §2, fail closed): its deletion is normally seen by a pass ({@link
   * #policyGone}), but a pass that was under way when the policy went and failed on it (its status
   * write answered 404) leaves the deletion to a retry JOSDK may never run before the next pass is
   * due, and the policy's series would stay meanwhile, for good if it never runs.
   *
   * @param cachedUid the UID the cache holds under a namespace and name, or null if none
   */
  public void forgetPoliciesNotCached(
      java.util.function.BiFunction<String, String, String> cachedUid) {
    Map<String, Named> recorded;
    meters.writeLock().lock();
    try {
      // Read before the cache is asked: a policy made live after this read is not looked at (its
      // pass read it from the cache, which holds it), and one read here was in the cache when its
      // pass started, so the cache not holding it now means it went.
      recorded = Map.copyOf(live);
      // What a pass that overlapped the policy's forgetting kept after it (announced transitions,
      // warned pods): a UID held here and not live is forgotten (gone), and is never live again.
      for (String uid : uidsKept()) {
        if (!live.containsKey(uid)) {
          forgetKept(uid);
        }
      }
    } finally {
      meters.writeLock().unlock();
    }
    recorded.forEach(
        (uid, where) -> {
          String now = cachedUid.apply(where.namespace(), where.name());
          if (!uid.equals(now)) {
            LOG.info(
                "ModelDeployment {}/{} (uid {}) is gone and no pass saw its deletion: its meters"
                    + " are removed",
                where.namespace(),
                where.name(),
                uid);
            forget(where.namespace(), now == null ? where.name() : null, uid);
          }
        });
  }

  @Override
  public void close() {
    events.close();
  }
}

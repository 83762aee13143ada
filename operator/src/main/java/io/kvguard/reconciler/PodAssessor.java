package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineRejection;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Decides one pod's verdict for this pass from what is known about its current engine process, and asks for
 * a probe when the knowledge is missing or due. Never waits for an engine.
 */
final class PodAssessor {
  static final Duration FAILED_RETRY = Duration.ofSeconds(5);
  private static final Duration MAX_DUE_SLACK = Duration.ofSeconds(1);
  private final ProbeScheduler<ProbeOutcome> scheduler;
  private final ProbeScheduler<RejectionOutcome> rejections;
  private final RejectionProbe rejectionProbe;
  private final EngineProbes probes;
  private final io.kvguard.observe.Observer signals;
  private final ProbeCredentials credentials;
  private final ProbeTrust trust;
  private final ProbeTargets targets;

  /** Whether a queued probe may still be sent: asked just before it is, from the informer cache. */
  @FunctionalInterface
  interface ProbeTargets {
    /** Why the pod must not be probed at {@code podIP} any more (gone, recreated, re-addressed, deselected); empty: go. */
    Optional<String> whyNotProbe(String namespace, String name, String uid, String podIP);
  }

  PodAssessor(ProbeScheduler<ProbeOutcome> scheduler, ProbeScheduler<RejectionOutcome> rejections, EngineProbes probes,
      RejectionProbe rejectionProbe, io.kvguard.observe.Observer signals, ProbeCredentials credentials, ProbeTrust trust,
      ProbeTargets targets) {
    this.scheduler = scheduler;
    this.rejections = rejections;
    this.rejectionProbe = rejectionProbe;
    this.probes = probes;
    this.signals = signals;
    this.credentials = credentials;
    this.trust = trust;
    this.targets = targets;
  }

  /**
   * One pass of one policy.
   *
   * @param respec whether the policy's spec changed since its last pass: its pods are probed again (in the
   *     background; the last answer for the same process is judged against the new spec meanwhile)
   * @param probes the probe keys the pass used, so a pod's keys it replaced (a spec edit changed how it is asked)
   *     can be let go
   * @param rejections the same for rejection probes (a restarted engine needs another prompt)
   */
  record Pass(Instant now, boolean respec, java.util.Set<ProbeScheduler.Key> probes,
      java.util.Set<ProbeScheduler.Key> rejections) {}

  PodAssessment assess(ModelDeployment md, RoleSpec role, Pod pod, VerdictRecord record, Pass pass) {
    Instant now = pass.now();
    boolean respec = pass.respec();
    List<String> notes = new ArrayList<>();
    // The record is pod metadata, which anyone who may patch the pod can write; the condition is pods/status.
    // A record may open nothing the condition did not already show open (fail closed on a forged one).
    boolean vouched = vouchedFor(record, pod);
    boolean labelOnly = !declaresGate(pod);
    if (labelOnly) {
      notes.add("pod spec has no readiness gate " + GateNames.CONDITION_TYPE + ": gated by label "
          + GateNames.VERIFIED_LABEL + " only");
    }
    EngineProcess.Resolution resolution = EngineProcess.resolve(pod, role.getPort(), role.getMetricsPort());
    if (resolution instanceof EngineProcess.NotProbeable waiting) {
      PoolVerdict verdict = waiting.misconfigured()
          ? new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, waiting.message())
          : PoolVerdict.awaitingProbe(waiting.message());
      return new PodAssessment(pod, role.getName(), labelOnly, waiting.containerID(), waiting.restartCount(),
          verdict, null, notes, null);
    }
    EngineProcess process = ((EngineProcess.Probeable) resolution).process();
    ProbeCredentials.Lookup token = credentials.token(ResourceID.fromResource(md), md.getMetadata().getNamespace(),
        md.getSpec().effectiveProbe().getAuthSecretRef());
    if (token.problem() != null) {
      // Without its credentials an engine cannot be asked; never fall back to asking without them.
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, "probe credentials: " + token.problem()), null, notes, null);
    }
    ProbeTrust.Lookup tls = role.effectiveScheme() == io.kvguard.customresource.Scheme.HTTPS
        ? trust.settings(md.getMetadata().getNamespace(), md.getSpec().effectiveProbe().getTls())
        : new ProbeTrust.Lookup(java.util.Optional.empty(), null);
    if (tls.problem() != null) {
      // Without the CA it was told to trust, the engine's certificate cannot be verified: never probe it unverified.
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, "probe TLS: " + tls.problem()), null, notes, null);
    }
    ResourceID self = ResourceID.fromResource(md);
    String namespace = pod.getMetadata().getNamespace();
    // Policies that ask this pod the same way share one probe and its answer.
    ProbeScheduler.Key key = new ProbeScheduler.Key(pod.getMetadata().getUid(), how(md, role, process));
    pass.probes().add(key);
    PoolPolicy policy = policy(md, role);
    ProbeScheduler.Result<ProbeOutcome> result = scheduler.result(key, self)
        .filter(r -> r.isFor(process.identity())).orElse(null);
    Duration period = Duration.ofSeconds(md.getSpec().effectiveProbe().effectivePeriodSeconds());

    // Re-probe when the process is new to us, when the period has passed, and when the spec changed; an
    // earlier answer for the same process still stands meanwhile, so a spec edit does not shut every gate.
    Duration wait = result == null ? period : waitAfter(result, period);
    boolean due = result == null || respec || isDue(result, period, now);
    EngineEndpoint endpoint = EngineEndpoint.of(role.effectiveScheme().wireName(), process.podIP(), process.port(),
        Duration.ofSeconds(md.getSpec().effectiveProbe().effectiveTimeoutSeconds())).withBearerToken(token.token())
        .withMetricsPort(process.metricsPort()).withTls(tls.tls());
    java.util.function.Supplier<Optional<String>> stillWanted = () -> targets.whyNotProbe(namespace,
        pod.getMetadata().getName(), pod.getMetadata().getUid(), process.podIP());
    if (due) {
      EngineProbe probe = probes.forRole(role);
      scheduler.request(key, self, namespace, process.identity(), r -> !respec && !isDue(r, period, now), stillWanted,
          () -> probe.probe(endpoint.startingNow()),
          (outcome, took) -> signals.probed(md, role, outcome, took));
    }
    if (result != null) {
      PoolObservation observation = result.outcome() instanceof ProbeOutcome.Observed seen ? seen.observation() : null;
      Checked checked = withRejectionCheck(md, role, process, key, endpoint, stillWanted,
          PoolJudge.judge(policy, result.outcome()), observation, record, vouched, pass.rejections());
      addObservationNotes(role, observation, notes);
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          checked.verdict(), observation, notes, due ? null : result.completedAt().plus(wait), checked.refusal());
    }
    // No probe of this process yet in this operator's memory. If the pod carries this policy's verdict for this
    // very container (the operator restarted), re-judge those figures instead of flapping the gate shut.
    PoolObservation recorded = recordedObservation(record, role, process);
    if (recorded != null) {
      notes.add("verdict carried over from the pod's record for container " + process.containerID()
          + " until it is re-probed");
      addObservationNotes(role, recorded, notes);
      // The rejection probe is owed too: a pool recorded before it was enabled, or for another prompt, is no refusal.
      Checked checked = withRejectionCheck(md, role, process, key, endpoint, stillWanted,
          PoolJudge.judge(policy, ProbeOutcome.observed(recorded)), recorded, record, vouched, pass.rejections());
      if (checked.verdict().verified() && !vouched) {
        return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
            PoolVerdict.awaitingProbe("the pod's record of container " + process.containerID() + " would open a gate"
                + " its condition shows shut: not carried over, probing the engine"), null, notes, null);
      }
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          checked.verdict(), recorded, notes, null, checked.refusal());
    }
    return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
        PoolVerdict.awaitingProbe("probing engine container " + process.containerName() + " (" + process.containerID()
            + ", restart " + process.restartCount() + ")"), null, notes, null);
  }

  /**
   * Once a pod's pool passed, and when the spec asks for it, the engine must also refuse a prompt just above
   * its admission limit before the gate opens. Sent once per engine process; a pass recorded in status for
   * the same container (before an operator restart) still counts.
   */
  private Checked withRejectionCheck(ModelDeployment md, RoleSpec role, EngineProcess process,
      ProbeScheduler.Key key, EngineEndpoint endpoint, java.util.function.Supplier<Optional<String>> stillWanted,
      PoolVerdict poolVerdict, PoolObservation observation, VerdictRecord before, boolean vouched,
      java.util.Set<ProbeScheduler.Key> used) {
    RejectionProbeSpec spec = md.getSpec().effectiveRejectionProbe();
    if (!spec.effectiveEnabled() || !poolVerdict.verified() || observation == null) {
      return new Checked(poolVerdict, null);
    }
    long promptTokens;
    try {
      promptTokens = RejectionJudge.promptTokens(observation, spec.effectiveMarginTokens());
    } catch (ArithmeticException e) {
      // Figures this large are no engine's: no prompt can be sized from them, and nothing is proven.
      return new Checked(new PoolVerdict(io.kvguard.verdict.Verdict.Unknown, io.kvguard.verdict.GateReason.ProbeFailed,
          "rejection probe: the engine's figures leave no prompt size above its admission limit"), null);
    }
    if (vouched && process.containerID().equals(before.rejectionRefusedBy())
        && Objects.equals(before.restartCount(), process.restartCount())
        && Long.valueOf(promptTokens).equals(before.rejectionPromptTokens())
        && before.rejectionRefusalStatus() != null && before.rejectionRefusalError() != null
        && probes.forRole(role).rejection()
            .filter(r -> r.recognises(before.rejectionRefusalStatus(), before.rejectionRefusalError())).isPresent()) {
      // The refusal as the engine gave it; a record without its status (older kvguard), or with one this engine's
      // recogniser no longer counts (an older kvguard took a gateway's answer for vLLM's), is sent again instead.
      return refusedOrNot(poolVerdict, new RejectionOutcome.Refused(before.rejectionRefusalStatus(),
          before.rejectionRefusalError(), promptTokens));
    }
    ResourceID self = ResourceID.fromResource(md);
    ProbeScheduler.Key rejectionKey = new ProbeScheduler.Key(key.podUid(), "rejection|" + promptTokens + "|"
        + spec.effectiveTimeoutSeconds() + "|" + md.getSpec().getModel() + "|" + key.how());
    used.add(rejectionKey);
    ProbeScheduler.Result<RejectionOutcome> result = rejections.result(rejectionKey, self)
        .filter(r -> r.isFor(process.identity())).orElse(null);
    if (result != null) {
      return refusedOrNot(poolVerdict, result.outcome());
    }
    EngineEndpoint patient = endpoint.withTimeout(Duration.ofSeconds(spec.effectiveTimeoutSeconds()));
    Optional<EngineRejection> engine = probes.forRole(role).rejection();
    rejections.request(rejectionKey, self, md.getMetadata().getNamespace(), process.identity(), r -> true,
        stillWanted,
        () -> rejectionProbe.send(engine, role.getEngine().wireName(), patient.startingNow(), promptTokens,
            md.getSpec().getModel(), observation, EngineRejection.Route.POD),
        (outcome, took) -> signals.rejectionProbed(md, role, outcome));
    return new Checked(PoolVerdict.awaitingProbe(poolVerdict.message() + "; rejection probe of a " + promptTokens
        + "-token prompt pending"), null);
  }

  /** A verdict, and the refusal it rests on (null when it rests on none). */
  private record Checked(PoolVerdict verdict, RejectionOutcome.Refused refusal) {}

  private static Checked refusedOrNot(PoolVerdict poolVerdict, RejectionOutcome outcome) {
    PoolVerdict verdict = RejectionJudge.judge(poolVerdict, outcome);
    boolean refusal = verdict.verified() && outcome instanceof RejectionOutcome.Refused;
    return new Checked(verdict, refusal ? (RejectionOutcome.Refused) outcome : null);
  }

  /** A failed probe is retried sooner: a freshly started engine often is not listening yet. */
  private static Duration waitAfter(ProbeScheduler.Result<ProbeOutcome> result, Duration period) {
    return result.outcome() instanceof ProbeOutcome.Failed && period.compareTo(FAILED_RETRY) > 0 ? FAILED_RETRY : period;
  }

  /**
   * Due when the wait has passed, or will within a tenth of it (at most a second), or the spec changed since the
   * answer was taken. The slack lets one pass re-probe every pod of a ModelDeployment whose turn is about to come,
   * rather than a pass per pod a few hundred milliseconds apart (passes are never rescheduled closer than a
   * second, so without it each re-probe also ran up to a second late and drifted).
   */
  private static boolean isDue(ProbeScheduler.Result<ProbeOutcome> result, Duration period, Instant now) {
    Duration wait = waitAfter(result, period);
    Duration slack = wait.dividedBy(10).compareTo(MAX_DUE_SLACK) < 0 ? wait.dividedBy(10) : MAX_DUE_SLACK;
    return !result.completedAt().plus(wait).minus(slack).isAfter(now);
  }

  static PoolPolicy policy(ModelDeployment md, RoleSpec role) {
    return RolePolicies.of(md.getSpec(), role);
  }

  /**
   * Everything that decides what a probe of the process answers: engine, scheme, the ports it resolves to, the
   * timeout, the generic probe's settings, the credentials and the TLS settings. Policies asking alike share one
   * probe.
   */
  static String how(ModelDeployment md, RoleSpec role, EngineProcess process) {
    io.kvguard.customresource.SecretKeyRef auth = md.getSpec().effectiveProbe().getAuthSecretRef();
    return role.getEngine().wireName() + "|" + role.effectiveScheme().wireName() + "|" + process.port()
        + "|" + process.metricsPort() + "|" + md.getSpec().effectiveProbe().effectiveTimeoutSeconds() + "|"
        + EngineProbes.configuration(role) + "|" + (auth == null ? "" : auth.getName() + "/" + auth.effectiveKey())
        + "|" + tlsSettings(md, role);
  }

  /** Which TLS settings the answer was taken with: an edit of them re-probes (a changed bundle at the next probe). */
  private static String tlsSettings(ModelDeployment md, RoleSpec role) {
    io.kvguard.customresource.ProbeTlsSpec tls = md.getSpec().effectiveProbe().getTls();
    if (tls == null || role.effectiveScheme() != io.kvguard.customresource.Scheme.HTTPS) {
      return "";
    }
    String secret = tls.getCaSecretRef() == null ? "" : tls.getCaSecretRef().getName() + "/" + tls.getCaSecretRef().effectiveKey();
    String configMap = tls.getCaConfigMapRef() == null ? ""
        : tls.getCaConfigMapRef().getName() + "/" + tls.getCaConfigMapRef().effectiveKey();
    return "secret=" + secret + ",configmap=" + configMap + ",serverName=" + tls.getServerName();
  }

  static boolean declaresGate(Pod pod) {
    List<PodReadinessGate> gates = pod.getSpec() == null ? null : pod.getSpec().getReadinessGates();
    return gates != null && gates.stream().anyMatch(g -> GateNames.CONDITION_TYPE.equals(g.getConditionType()));
  }

  private static void addObservationNotes(RoleSpec role, PoolObservation observation, List<String> notes) {
    if (observation == null) {
      return;
    }
    notes.addAll(observation.notes());
    String mode = observation.disaggregationMode();
    String roleName = role.getName();
    boolean disaggregatedRole = roleName.equals("prefill") || roleName.equals("decode");
    if (disaggregatedRole && !roleName.equals(mode)) {
      notes.add("role " + roleName + " but the engine reports disaggregation mode " + (mode == null ? "unified" : mode));
    }
  }

  /**
   * Whether the gate condition (written only through pods/status, with the record) shows this record's verdict
   * open: only then may the record stand in for a probe that would open the gate.
   */
  static boolean vouchedFor(VerdictRecord record, Pod pod) {
    return record != null && Verdict.Verified.name().equals(record.verdict())
        && Boolean.TRUE.equals(io.kvguard.gate.GateState.conditionOpen(pod));
  }

  static PoolObservation recordedObservation(VerdictRecord before, RoleSpec role, EngineProcess process) {
    if (before == null || before.poolTokens() == null || !role.getName().equals(before.role())
        || !Objects.equals(before.containerID(), process.containerID())
        || !Objects.equals(before.restartCount(), process.restartCount())
        || before.verdict() == null || Verdict.Unknown.name().equals(before.verdict())) {
      return null;
    }
    OptionalLong engineContext = before.engineContextTokens() == null ? OptionalLong.empty()
        : OptionalLong.of(before.engineContextTokens());
    if (!role.getEngine().exposesKvPool()) {
      // No pool was measured: the recorded bound is the context length, and must still say so.
      boolean consistent = engineContext.isPresent() && engineContext.getAsLong() == before.poolTokens();
      return consistent ? PoolObservation.contextLengthOnly(before.poolTokens(), before.engineVersion(), List.of()) : null;
    }
    if (before.poolSource() != null) {
      // Recorded as an upper bound only: it must stay one, or a restart would judge it as a measured pool.
      PoolObservation.PoolSource source;
      try {
        source = PoolObservation.PoolSource.valueOf(before.poolSource());
      } catch (IllegalArgumentException e) {
        return null;
      }
      if (!source.upperBound()
          || (source == PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD && engineContext.isEmpty())) {
        return null;
      }
      return PoolObservation.upperBound(before.poolTokens(), engineContext, before.engineVersion(),
          before.disaggregationMode(), List.of(), source, "recorded as an upper bound before the operator"
              + " restarted; the next probe says why");
    }
    return new PoolObservation(before.poolTokens(), engineContext, before.engineVersion(), before.disaggregationMode(), List.of());
  }
}

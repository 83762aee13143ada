package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.Scheme;
import io.kvguard.customresource.SecretKeyRef;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineRejection;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The assessment stage for one pod: a pure function of the spec, the pod, the policy's record on
 * it, the last probe results and the clock. Decides the pod's verdict for this pass from what is
 * known about its current engine process, and says which probes it wants ({@link Assessed#probe},
 * {@link Assessed#rejection}) when the knowledge is missing or due; {@link ProbeBook} sends them.
 * Never waits for an engine, never writes anything.
 */
final class Assessment {
  private Assessment() {}

  /**
   * What one pod's assessment reads.
   *
   * @param record this policy's trusted record on the pod, or null
   * @param respec whether the policy's spec changed since its last pass: its pods are probed again
   *     (the last answer for the same process is judged against the new spec meanwhile)
   */
  record Input(
      ModelDeployment md,
      RoleSpec role,
      Pod pod,
      VerdictRecord record,
      boolean respec,
      Instant now) {}

  /**
   * The last results this operator holds, and what the policy may ask with (its credentials and CA
   * bundle).
   */
  interface Known {
    Optional<ProbeScheduler.Result<ProbeOutcome>> probe(ProbeScheduler.Key key);

    Optional<ProbeScheduler.Result<RejectionOutcome>> rejection(ProbeScheduler.Key key);

    ProbeCredentials.Lookup token();

    ProbeTrust.Lookup tls();

    EngineProbes probes();

    /** The proof through the prefill/decode router for this key, if one finished. */
    default Optional<ProbeScheduler.Result<RejectionOutcome>> routerProof(ProbeScheduler.Key key) {
      return Optional.empty();
    }

    /** The policy's last passing proof through its router, from any key. */
    default Optional<RouterProofs.Passed> passedRouterProof() {
      return Optional.empty();
    }
  }

  /** A probe of the pod's engine process this pass wants sent. */
  record ProbeRequest(
      ProbeScheduler.Key key,
      Pod pod,
      RoleSpec role,
      EngineProcess process,
      EngineEndpoint endpoint,
      boolean respec,
      Duration period,
      Instant now) {
    /** A result the request finds already published and still fresh makes it unnecessary. */
    boolean fresh(ProbeScheduler.Result<ProbeOutcome> result) {
      return !respec && !ProbeDue.isDue(result, period, now);
    }
  }

  /** A rejection probe (the over-limit prompt) this pass wants sent. */
  record RejectionRequest(
      ProbeScheduler.Key key,
      Pod pod,
      RoleSpec role,
      EngineProcess process,
      EngineEndpoint patient,
      long promptTokens,
      String model,
      PoolObservation observation) {}

  /**
   * One pod's assessment and what it wants.
   *
   * @param probeKey the probe the verdict rests on, null when the pod cannot be probed
   * @param rejectionKey the rejection probe the verdict rests on, null when none
   */
  record Assessed(
      PodAssessment assessment,
      ProbeScheduler.Key probeKey,
      ProbeScheduler.Key rejectionKey,
      Optional<ProbeRequest> probe,
      Optional<RejectionRequest> rejection,
      RouterProofs.Member routerMember) {
    Assessed(
        PodAssessment assessment,
        ProbeScheduler.Key probeKey,
        ProbeScheduler.Key rejectionKey,
        Optional<ProbeRequest> probe,
        Optional<RejectionRequest> rejection) {
      this(assessment, probeKey, rejectionKey, probe, rejection, null);
    }

    static Assessed unprobed(PodAssessment assessment) {
      return new Assessed(assessment, null, null, Optional.empty(), Optional.empty());
    }

    /** The same, with the verdict the router's proof gives. */
    Assessed withVerdict(PoolVerdict verdict) {
      PodAssessment a = assessment;
      return new Assessed(
          new PodAssessment(
              a.pod(),
              a.role(),
              a.labelOnly(),
              a.containerID(),
              a.restartCount(),
              verdict,
              a.observation(),
              a.notes(),
              a.nextProbeAt(),
              a.refusal()),
          probeKey,
          rejectionKey,
          probe,
          rejection,
          routerMember);
    }
  }

  /** What every assessment of one pod's engine process says besides its verdict. */
  private record Subject(
      Pod pod,
      String role,
      boolean labelOnly,
      String containerID,
      Integer restartCount,
      List<String> notes) {
    PodAssessment judged(
        PoolVerdict verdict,
        PoolObservation observation,
        Instant nextProbeAt,
        RejectionOutcome.Refused refusal) {
      return new PodAssessment(
          pod,
          role,
          labelOnly,
          containerID,
          restartCount,
          verdict,
          observation,
          notes,
          nextProbeAt,
          refusal);
    }

    /** Shut without asking the engine: the verdict says why it cannot be asked. */
    Assessed shut(PoolVerdict verdict) {
      return Assessed.unprobed(judged(verdict, null, null, null));
    }
  }

  static Assessed of(Input in, Known known) {
    ModelDeployment md = in.md();
    RoleSpec role = in.role();
    Pod pod = in.pod();
    List<String> notes = new ArrayList<>();
    // The record is pod metadata, which anyone who may patch the pod can write; the condition is
    // pods/status. A record may open nothing the condition did not already show open (fail closed
    // on a forged one).
    boolean vouched = CarryOver.vouchedFor(in.record(), pod);
    boolean labelOnly = !declaresGate(pod);
    if (labelOnly) {
      notes.add(
          "pod spec has no readiness gate "
              + GateNames.CONDITION_TYPE
              + ": gated by label "
              + GateNames.VERIFIED_LABEL
              + " only");
    }
    EngineProcess.Resolution resolution =
        EngineProcess.resolve(pod, role.getPort(), role.getMetricsPort());
    if (resolution instanceof EngineProcess.NotProbeable waiting) {
      PoolVerdict verdict =
          waiting.misconfigured()
              ? new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, waiting.message())
              : PoolVerdict.awaitingProbe(waiting.message());
      return new Subject(
              pod, role.getName(), labelOnly, waiting.containerID(), waiting.restartCount(), notes)
          .shut(verdict);
    }
    EngineProcess process = ((EngineProcess.Probeable) resolution).process();
    Subject subject =
        new Subject(
            pod, role.getName(), labelOnly, process.containerID(), process.restartCount(), notes);
    ProbeCredentials.Lookup token = known.token();
    if (token.problem() != null) {
      // Without its credentials an engine cannot be asked; never fall back to asking without them.
      return subject.shut(
          new PoolVerdict(
              Verdict.Unknown, GateReason.ProbeFailed, "probe credentials: " + token.problem()));
    }
    ProbeTrust.Lookup tls =
        role.effectiveScheme() == Scheme.HTTPS
            ? known.tls()
            : new ProbeTrust.Lookup(Optional.empty(), null);
    if (tls.problem() != null) {
      // Without the CA it was told to trust, the engine's certificate cannot be verified: never
      // probe it unverified.
      return subject.shut(
          new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, "probe TLS: " + tls.problem()));
    }
    // Policies that ask this pod the same way share one probe and its answer.
    ProbeScheduler.Key key =
        new ProbeScheduler.Key(pod.getMetadata().getUid(), how(md, role, process));
    PoolPolicy policy =
        RouterProofs.active(md.getSpec())
            ? RolePolicies.of(md.getSpec(), role).decidedByRouterProbe()
            : RolePolicies.of(md.getSpec(), role);
    ProbeScheduler.Result<ProbeOutcome> result =
        known.probe(key).filter(r -> r.isFor(process.identity())).orElse(null);
    Duration period = Duration.ofSeconds(md.getSpec().effectiveProbe().effectivePeriodSeconds());

    // Re-probe when the process is new to us, when the period has passed, and when the spec
    // changed; an earlier answer for the same process still stands meanwhile, so a spec edit does
    // not shut every gate.
    boolean due = result == null || in.respec() || ProbeDue.isDue(result, period, in.now());
    EngineEndpoint endpoint =
        EngineEndpoint.of(
                role.effectiveScheme().wireName(),
                process.podIP(),
                process.port(),
                Duration.ofSeconds(md.getSpec().effectiveProbe().effectiveTimeoutSeconds()))
            .withBearerToken(token.token())
            .withMetricsPort(process.metricsPort())
            .withTls(tls.tls());
    Optional<ProbeRequest> probe =
        due
            ? Optional.of(
                new ProbeRequest(key, pod, role, process, endpoint, in.respec(), period, in.now()))
            : Optional.empty();
    if (result != null) {
      PoolObservation observation =
          result.outcome() instanceof ProbeOutcome.Observed seen ? seen.observation() : null;
      Checked checked =
          withRejectionCheck(
              in,
              process,
              key,
              endpoint,
              PoolJudge.judge(policy, result.outcome()),
              observation,
              vouched,
              known);
      addObservationNotes(role, observation, notes);
      return new Assessed(
          subject.judged(
              checked.verdict(),
              observation,
              due ? null : ProbeDue.nextAt(result, period),
              checked.refusal()),
          key,
          checked.rejectionKey(),
          probe,
          checked.request(),
          checked.routerMember());
    }
    // No probe of this process yet in this operator's memory. If the pod carries this policy's
    // verdict for this very container (the operator restarted), re-judge those figures instead of
    // flapping the gate shut.
    PoolObservation recorded = CarryOver.recordedObservation(in.record(), role, process);
    if (recorded != null) {
      notes.add(
          "verdict carried over from the pod's record for container "
              + process.containerID()
              + " until it is re-probed");
      addObservationNotes(role, recorded, notes);
      // The rejection probe is owed too: a pool recorded before it was enabled, or for another
      // prompt, is no refusal.
      Checked checked =
          withRejectionCheck(
              in,
              process,
              key,
              endpoint,
              PoolJudge.judge(policy, ProbeOutcome.observed(recorded)),
              recorded,
              vouched,
              known);
      if (checked.verdict().verified() && !vouched) {
        return new Assessed(
            subject.judged(
                PoolVerdict.awaitingProbe(
                    "the pod's record of container "
                        + process.containerID()
                        + " would open a gate its condition shows shut: not carried over, probing the engine"),
                null,
                null,
                null),
            key,
            checked.rejectionKey(),
            probe,
            checked.request(),
            checked.routerMember());
      }
      return new Assessed(
          subject.judged(checked.verdict(), recorded, null, checked.refusal()),
          key,
          checked.rejectionKey(),
          probe,
          checked.request(),
          checked.routerMember());
    }
    return new Assessed(
        subject.judged(
            PoolVerdict.awaitingProbe(
                "probing engine container "
                    + process.containerName()
                    + " ("
                    + process.containerID()
                    + ", restart "
                    + process.restartCount()
                    + ")"),
            null,
            null,
            null),
        key,
        null,
        probe,
        Optional.empty());
  }

  /**
   * A verdict, the refusal it rests on (null when none), and the rejection probe it used and wants
   * (when the refusal is still owed).
   */
  private record Checked(
      PoolVerdict verdict,
      RejectionOutcome.Refused refusal,
      ProbeScheduler.Key rejectionKey,
      Optional<RejectionRequest> request,
      RouterProofs.Member routerMember) {
    Checked(PoolVerdict verdict) {
      this(verdict, null, null, Optional.empty(), null);
    }

    Checked(
        PoolVerdict verdict,
        RejectionOutcome.Refused refusal,
        ProbeScheduler.Key rejectionKey,
        Optional<RejectionRequest> request) {
      this(verdict, refusal, rejectionKey, request, null);
    }
  }

  /**
   * Once a pod's pool passed, and when the spec asks for it, the engine must also refuse a prompt
   * just above its admission limit before the gate opens. Sent once per engine process; a refusal
   * recorded for the same container (before an operator restart) still counts.
   */
  private static Checked withRejectionCheck(
      Input in,
      EngineProcess process,
      ProbeScheduler.Key key,
      EngineEndpoint endpoint,
      PoolVerdict poolVerdict,
      PoolObservation observation,
      boolean vouched,
      Known known) {
    ModelDeployment md = in.md();
    RejectionProbeSpec spec = md.getSpec().effectiveRejectionProbe();
    if (!spec.effectiveEnabled() || !poolVerdict.verified() || observation == null) {
      return new Checked(poolVerdict);
    }
    long promptTokens;
    try {
      promptTokens = RejectionJudge.promptTokens(observation, spec.effectiveMarginTokens());
    } catch (ArithmeticException e) {
      // Figures this large are no engine's: no prompt can be sized from them, and nothing is
      // proven.
      return new Checked(
          new PoolVerdict(
              Verdict.Unknown,
              GateReason.ProbeFailed,
              "rejection probe: the engine's figures leave no prompt size above its admission limit"));
    }
    if (RouterProofs.active(md.getSpec()) && observation.disaggregationMode() != null) {
      // A prefill or decode server refuses any prompt sent to it without the router's bootstrap
      // fields: its proof is the router's, for every such pod of the policy at once
      // (RouterProofs). The pool verdict stands until then.
      return new Checked(
          poolVerdict,
          null,
          null,
          Optional.empty(),
          new RouterProofs.Member(
              in.pod().getMetadata().getName(),
              in.pod().getMetadata().getUid(),
              observation.disaggregationMode(),
              imageID(in.pod(), process),
              observation.engineVersion(),
              process.identity(),
              endpoint,
              observation,
              promptTokens));
    }
    if (vouched) {
      Optional<EngineRejection> recogniser = known.probes().forRole(in.role()).rejection();
      Optional<RejectionOutcome.Refused> recorded =
          CarryOver.recordedRefusal(in.record(), process, promptTokens, observation, recogniser);
      if (recorded.isPresent()) {
        return refusedOrNot(poolVerdict, recorded.get(), null);
      }
    }
    ProbeScheduler.Key rejectionKey =
        new ProbeScheduler.Key(
            key.podUid(),
            "rejection|"
                + promptTokens
                + "|"
                + spec.effectiveTimeoutSeconds()
                + "|"
                + md.getSpec().getModel()
                + "|"
                + key.how());
    ProbeScheduler.Result<RejectionOutcome> result =
        known.rejection(rejectionKey).filter(r -> r.isFor(process.identity())).orElse(null);
    if (result != null) {
      return refusedOrNot(poolVerdict, result.outcome(), rejectionKey);
    }
    EngineEndpoint patient =
        endpoint.withTimeout(Duration.ofSeconds(spec.effectiveTimeoutSeconds()));
    return new Checked(
        PoolVerdict.awaitingProbe(
            poolVerdict.message()
                + "; rejection probe of a "
                + promptTokens
                + "-token prompt pending"),
        null,
        rejectionKey,
        Optional.of(
            new RejectionRequest(
                rejectionKey,
                in.pod(),
                in.role(),
                process,
                patient,
                promptTokens,
                md.getSpec().getModel(),
                observation)));
  }

  private static Checked refusedOrNot(
      PoolVerdict poolVerdict, RejectionOutcome outcome, ProbeScheduler.Key used) {
    PoolVerdict verdict = RejectionJudge.judge(poolVerdict, outcome);
    boolean refusal = verdict.verified() && outcome instanceof RejectionOutcome.Refused;
    return new Checked(
        verdict, refusal ? (RejectionOutcome.Refused) outcome : null, used, Optional.empty());
  }

  /**
   * Everything that decides what a probe of the process answers: engine, scheme, the ports it
   * resolves to, the timeout, the generic probe's settings, the credentials and the TLS settings.
   * Policies asking alike share one probe.
   */
  static String how(ModelDeployment md, RoleSpec role, EngineProcess process) {
    SecretKeyRef auth = md.getSpec().effectiveProbe().getAuthSecretRef();
    return role.getEngine().wireName()
        + "|"
        + role.effectiveScheme().wireName()
        + "|"
        + process.port()
        + "|"
        + process.metricsPort()
        + "|"
        + md.getSpec().effectiveProbe().effectiveTimeoutSeconds()
        + "|"
        + EngineProbes.configuration(role)
        + "|"
        + (auth == null ? "" : auth.getName() + "/" + auth.effectiveKey())
        + "|"
        + tlsSettings(md, role);
  }

  /**
   * Which TLS settings the answer was taken with: an edit of them re-probes (a changed bundle at
   * the next probe).
   */
  private static String tlsSettings(ModelDeployment md, RoleSpec role) {
    io.kvguard.customresource.ProbeTlsSpec tls = md.getSpec().effectiveProbe().getTls();
    if (tls == null || role.effectiveScheme() != Scheme.HTTPS) {
      return "";
    }
    String secret =
        tls.getCaSecretRef() == null
            ? ""
            : tls.getCaSecretRef().getName() + "/" + tls.getCaSecretRef().effectiveKey();
    String configMap =
        tls.getCaConfigMapRef() == null
            ? ""
            : tls.getCaConfigMapRef().getName() + "/" + tls.getCaConfigMapRef().effectiveKey();
    return "secret=" + secret + ",configmap=" + configMap + ",serverName=" + tls.getServerName();
  }

  /** The engine container's image as the kubelet ran it (its digest), "" when not reported. */
  static String imageID(Pod pod, EngineProcess process) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return "";
    }
    return pod.getStatus().getContainerStatuses().stream()
        .filter(c -> process.containerName().equals(c.getName()))
        .map(c -> c.getImageID() == null ? "" : c.getImageID())
        .findFirst()
        .orElse("");
  }

  static boolean declaresGate(Pod pod) {
    List<PodReadinessGate> gates = pod.getSpec() == null ? null : pod.getSpec().getReadinessGates();
    return gates != null
        && gates.stream().anyMatch(g -> GateNames.CONDITION_TYPE.equals(g.getConditionType()));
  }

  private static void addObservationNotes(
      RoleSpec role, PoolObservation observation, List<String> notes) {
    if (observation == null) {
      return;
    }
    notes.addAll(observation.notes());
    String mode = observation.disaggregationMode();
    String roleName = role.getName();
    boolean disaggregatedRole = roleName.equals("prefill") || roleName.equals("decode");
    if (disaggregatedRole && !roleName.equals(mode)) {
      notes.add(
          "role "
              + roleName
              + " but the engine reports disaggregation mode "
              + (mode == null ? "unified" : mode));
    }
  }
}

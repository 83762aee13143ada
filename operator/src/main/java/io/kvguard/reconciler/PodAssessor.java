package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineProbes;
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
import java.util.OptionalLong;

/**
 * Decides one pod's verdict for this pass from what is known about its current engine process, and asks for
 * a probe when the knowledge is missing or due. Never waits for an engine.
 */
final class PodAssessor {
  private final ProbeScheduler scheduler;
  private final EngineProbes probes;
  private final Signals signals;

  PodAssessor(ProbeScheduler scheduler, EngineProbes probes, Signals signals) {
    this.scheduler = scheduler;
    this.probes = probes;
    this.signals = signals;
  }

  PodAssessment assess(ModelDeployment md, RoleSpec role, Pod pod, PodVerdictStatus before, Instant now) {
    List<String> notes = new ArrayList<>();
    boolean labelOnly = !declaresGate(pod);
    if (labelOnly) {
      notes.add("pod spec has no readiness gate " + GateNames.CONDITION_TYPE + ": gated by label "
          + GateNames.VERIFIED_LABEL + " only");
    }
    EngineProcess.Resolution resolution = EngineProcess.resolve(pod, role.getPort());
    if (resolution instanceof EngineProcess.NotProbeable waiting) {
      PoolVerdict verdict = waiting.misconfigured()
          ? new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, waiting.message())
          : PoolVerdict.awaitingProbe(waiting.message());
      return new PodAssessment(pod, role.getName(), labelOnly, waiting.containerID(), waiting.restartCount(),
          verdict, null, notes);
    }
    EngineProcess process = ((EngineProcess.Probeable) resolution).process();
    ProbeScheduler.Key key = new ProbeScheduler.Key(ResourceID.fromResource(md), pod.getMetadata().getUid());
    String fingerprint = fingerprint(md, role);
    PoolPolicy policy = policy(md, role);
    ProbeScheduler.Result result = scheduler.result(key)
        .filter(r -> r.isFor(process.identity(), fingerprint)).orElse(null);
    Duration period = Duration.ofSeconds(md.getSpec().effectiveProbe().effectivePeriodSeconds());

    if (result == null || !result.completedAt().plus(period).isAfter(now)) {
      EngineEndpoint endpoint = EngineEndpoint.of(role.effectiveScheme().wireName(), process.podIP(), process.port(),
          Duration.ofSeconds(md.getSpec().effectiveProbe().effectiveTimeoutSeconds()));
      scheduler.request(key, process.identity(), fingerprint, period, now, probes.forEngine(role.getEngine()), endpoint,
          (outcome, took) -> signals.probed(md, role, outcome, took));
    }
    if (result != null) {
      PoolVerdict verdict = PoolJudge.judge(policy, result.outcome());
      PoolObservation observation = result.outcome() instanceof ProbeOutcome.Observed seen ? seen.observation() : null;
      addObservationNotes(role, observation, notes);
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          verdict, observation, notes);
    }
    // No probe of this process yet in this operator's memory. If the status recorded a verdict for this very
    // container (the operator restarted), re-judge those figures instead of flapping the gate shut.
    PoolObservation recorded = recordedObservation(before, role, process);
    if (recorded != null) {
      notes.add("verdict carried over from status for container " + process.containerID() + " until it is re-probed");
      addObservationNotes(role, recorded, notes);
      return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
          PoolJudge.judge(policy, ProbeOutcome.observed(recorded)), recorded, notes);
    }
    return new PodAssessment(pod, role.getName(), labelOnly, process.containerID(), process.restartCount(),
        PoolVerdict.awaitingProbe("probing engine container " + process.containerName() + " (" + process.containerID()
            + ", restart " + process.restartCount() + ")"), null, notes);
  }

  static PoolPolicy policy(ModelDeployment md, RoleSpec role) {
    return new PoolPolicy(md.getSpec().getContextWindow(), md.getSpec().effectiveMinPoolRatio(),
        role.effectiveAllowEngineContextAbovePool());
  }

  /** What decides whether an earlier probe answer still describes the process: where and how it was asked. */
  static String fingerprint(ModelDeployment md, RoleSpec role) {
    return role.getEngine().wireName() + "|" + role.effectiveScheme().wireName() + "|" + role.getPort()
        + "|" + md.getSpec().effectiveProbe().effectiveTimeoutSeconds();
  }

  private static boolean declaresGate(Pod pod) {
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

  private static PoolObservation recordedObservation(PodVerdictStatus before, RoleSpec role, EngineProcess process) {
    if (before == null || before.poolTokens == null || !role.getName().equals(before.role)
        || !Objects.equals(before.containerID, process.containerID())
        || !Objects.equals(before.restartCount, process.restartCount())
        || Verdict.Unknown.name().equals(before.verdict)) {
      return null;
    }
    OptionalLong engineContext = before.engineContextTokens == null ? OptionalLong.empty()
        : OptionalLong.of(before.engineContextTokens);
    return new PoolObservation(before.poolTokens, engineContext, before.engineVersion, before.disaggregationMode, List.of());
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.util.List;

/** Assessments that shut a pod when kvguard cannot reach a verdict on it at all, and say why. */
final class ShutAssessments {
  private ShutAssessments() {}

  /**
   * A pod a policy gated before its spec became one kvguard cannot apply. Releasing it would open
   * it (a pod no policy selects is handed back open), and the broken spec cannot say whether it
   * still means the pod: it is held shut, under the role it had, until the spec is fixed or the
   * policy deleted.
   */
  static PodAssessment heldForInvalidSpec(Pod pod, VerdictRecord previous, String problem) {
    return shut(
        pod,
        previous.role() == null ? "" : previous.role(),
        previous.containerID(),
        previous.restartCount(),
        "the ModelDeployment's spec cannot be applied ("
            + problem
            + "); the pod stays shut until it is fixed");
  }

  /**
   * A pod whose assessment failed with an error of kvguard's own: it is shut and the other pods of
   * the pass go on, so one pod cannot leave every other gate as it was (open ones too) until the
   * error clears.
   */
  static PodAssessment failed(Pod pod, String role, RuntimeException error) {
    return shut(
        pod,
        role,
        null,
        null,
        "kvguard could not assess this pod ("
            + error.getClass().getSimpleName()
            + "); the gate stays shut until a pass succeeds");
  }

  /**
   * A pod of a namespace whose pod watch has been down since {@code since}, for longer than {@link
   * WatchLoss#BOUND}: kvguard cannot see its containers restart, so it vouches for none of them.
   */
  static PodAssessment unwatched(Pod pod, String role, String namespace, Instant since) {
    return shut(
        pod,
        role,
        null,
        null,
        "kvguard has not been able to watch the pods of namespace "
            + namespace
            + " since "
            + since
            + " (its WATCH of pods fails or is refused: check its RBAC, verb watch on pods), so it"
            + " cannot see this pod's containers restart; the gate stays shut until the watch works"
            + " again");
  }

  private static PodAssessment shut(
      Pod pod, String role, String containerID, Integer restartCount, String why) {
    return new PodAssessment(
        pod,
        role,
        !Assessment.declaresGate(pod),
        containerID,
        restartCount,
        new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, why),
        null,
        List.of(),
        null);
  }
}

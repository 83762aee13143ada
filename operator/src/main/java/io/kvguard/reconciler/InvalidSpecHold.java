package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.Verdict;
import java.util.List;

/**
 * A pod a policy gated before its spec became one kvguard cannot apply. Releasing it would open it (a pod no
 * policy selects is handed back open), and the broken spec cannot say whether it still means the pod: it is
 * held shut, under the role it had, until the spec is fixed or the policy deleted.
 */
final class InvalidSpecHold {
  private InvalidSpecHold() {}

  static PodAssessment of(Pod pod, PodVerdictStatus previous, String problem) {
    PoolVerdict shut = new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed,
        "the ModelDeployment's spec cannot be applied (" + problem + "); the pod stays shut until it is fixed");
    boolean labelOnly = !PodAssessor.declaresGate(pod);
    return new PodAssessment(pod, previous.role == null ? "" : previous.role, labelOnly, previous.containerID,
        previous.restartCount, shut, null, List.of(), null);
  }
}

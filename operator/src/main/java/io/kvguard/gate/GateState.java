package io.kvguard.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.verdict.GateReason;

/** Reads the gate a pod currently shows. */
public final class GateState {
  private GateState() {}

  public static boolean labelled(Pod pod) {
    return pod.getMetadata().getLabels() != null
        && pod.getMetadata().getLabels().containsKey(io.kvguard.gate.GateNames.VERIFIED_LABEL);
  }

  /** True or false for the condition's status, null when the pod has no kvguard condition yet. */
  public static Boolean conditionOpen(Pod pod) {
    PodCondition condition = condition(pod);
    return condition == null ? null : "True".equals(condition.getStatus());
  }

  /**
   * Whether the pod shows the gate a policy that still exists let go shut ({@link
   * GateReason#NoLongerSelected}): only an enforcing verdict may open it again.
   */
  public static boolean letGoShut(Pod pod) {
    PodCondition condition = condition(pod);
    return condition != null
        && !"True".equals(condition.getStatus())
        && GateReason.NoLongerSelected.name().equals(condition.getReason());
  }

  private static PodCondition condition(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return null;
    }
    for (PodCondition condition : pod.getStatus().getConditions()) {
      if (GateNames.CONDITION_TYPE.equals(condition.getType())) {
        return condition;
      }
    }
    return null;
  }
}

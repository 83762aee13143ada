package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.gate.GateNames;

/** Reads the gate a pod currently shows. */
final class GateState {
  private GateState() {}

  /** True or false for the condition's status, null when the pod has no kvguard condition yet. */
  static Boolean conditionOpen(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return null;
    }
    for (PodCondition condition : pod.getStatus().getConditions()) {
      if (GateNames.CONDITION_TYPE.equals(condition.getType())) {
        return "True".equals(condition.getStatus());
      }
    }
    return null;
  }
}

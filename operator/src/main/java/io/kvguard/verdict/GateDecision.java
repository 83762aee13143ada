package io.kvguard.verdict;

/**
 * What the pod-side gate should say: the condition's status, reason and message, and whether the
 * routing label is present. Derived only from the verdict and the enforcement mode.
 */
public record GateDecision(boolean open, GateReason reason, String message) {

  /**
   * In audit mode every gate is open, and the message still says what enforcement would have done.
   */
  public static GateDecision of(PoolVerdict verdict, boolean audit) {
    if (audit) {
      return new GateDecision(
          true,
          GateReason.Audit,
          "audit mode, gate not enforced; verdict "
              + verdict.verdict()
              + " ("
              + verdict.reason()
              + "): "
              + verdict.message());
    }
    return new GateDecision(verdict.verified(), verdict.reason(), verdict.message());
  }

  /**
   * The gate left behind when the ModelDeployment that owned it is deleted: open, so no pod is
   * stranded.
   */
  public static GateDecision policyRemoved(String modelDeployment) {
    return released(
        "ModelDeployment " + modelDeployment + " was deleted; kvguard no longer gates this pod");
  }

  /** A pod handed back open because the policy that gated it was deleted. */
  public static GateDecision released(String why) {
    return new GateDecision(true, GateReason.PolicyRemoved, why);
  }

  /**
   * The gate of a pod that a ModelDeployment which still exists stops selecting: shut, because an
   * edit of labels (anyone who may patch the pod) or of the selector must never open a gate the
   * policy kept shut.
   */
  public static GateDecision noLongerSelected(String modelDeployment) {
    return new GateDecision(
        false,
        GateReason.NoLongerSelected,
        "no longer selected by ModelDeployment "
            + modelDeployment
            + ", which still exists: the pod's labels or the selector changed, and no policy proved"
            + " the pod; it stays shut until a ModelDeployment selects and verifies it (restore the"
            + " labels, or delete the pod)");
  }
}

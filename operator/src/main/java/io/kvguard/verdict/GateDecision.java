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

  /**
   * A pod handed back open because no policy gates it any more (deleted, or its labels no longer
   * match).
   */
  public static GateDecision released(String why) {
    return new GateDecision(true, GateReason.PolicyRemoved, why);
  }
}

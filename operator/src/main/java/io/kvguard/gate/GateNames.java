package io.kvguard.gate;

/** The pod-side contract; routers, Services and pod templates depend on these exact strings. */
public final class GateNames {
  /** Pod condition type, also the readiness gate's conditionType in pod templates. */
  public static final String CONDITION_TYPE = "kvguard.io/pool-verified";

  /** Label present, with value "true", only on pods whose current engine container passed. */
  public static final String VERIFIED_LABEL = "kvguard.io/verified";

  /**
   * Pod annotation holding, per ModelDeployment, the figures and container its verdict rests on
   * ({@link VerdictRecord}); written on pods/status together with the condition.
   */
  public static final String VERDICTS_ANNOTATION = "kvguard.io/verdicts";

  /**
   * Label llm-d's context-length-aware plugin reads, "min-max" (llm-d/llm-d-router v0.10.0,
   * contextlengthaware/context_length_aware.go); kvguard writes "0-N" on verified pods of policies
   * that opt in.
   */
  public static final String CONTEXT_LENGTH_LABEL = "llm-d.ai/context-length-range";

  private GateNames() {}
}

package io.kvguard.verdict;

/**
 * Judges the over-limit request of the rejection probe: only the engine's own admission refusal
 * passes (each engine's probe recognises it by status and error shape). The incident's engine
 * answered such a prompt with HTTP 200 and other customers' data.
 */
public final class RejectionJudge {
  private RejectionJudge() {}

  /**
   * The probe's key: just above the engine's admission limit, min(pool, engine context) + margin.
   * It identifies the probe and its record (a change sends the prompts again); the lengths sent are
   * each engine's admission paths' own ({@code EngineRejection.paths}).
   */
  public static long promptTokens(PoolObservation observation, long marginTokens) {
    long limit =
        observation.engineContextTokens().isPresent()
            ? Math.min(observation.poolTokens(), observation.engineContextTokens().getAsLong())
            : observation.poolTokens();
    return Math.addExact(limit, marginTokens);
  }

  /**
   * How a verified message states the refusal: the status and error class the engine really
   * answered.
   */
  public static String refusal(RejectionOutcome.Refused refused) {
    if (refused.severalPaths()) {
      return "one prompt per admission path was refused, each by its own check ("
          + refused.errorClass().substring(RejectionOutcome.Refused.PATHS.length())
          + ")";
    }
    return "a "
        + refused.promptTokens()
        + "-token prompt was refused with HTTP "
        + refused.status()
        + " ("
        + refused.errorClass()
        + ")";
  }

  /**
   * The verdict for a pod whose pool already passed, given what its engine did with the over-limit
   * prompt.
   */
  public static PoolVerdict judge(PoolVerdict poolVerdict, RejectionOutcome outcome) {
    if (!poolVerdict.verified()) {
      return poolVerdict;
    }
    if (outcome instanceof RejectionOutcome.Refused refused) {
      // The refusal adds to what verified the pool; it does not turn a context-length bound into a
      // measured pool.
      return new PoolVerdict(
          Verdict.Verified, poolVerdict.reason(), poolVerdict.message() + "; " + refusal(refused));
    }
    if (outcome instanceof RejectionOutcome.Inconclusive inconclusive) {
      return new PoolVerdict(
          Verdict.Unknown,
          GateReason.RejectionProbeInconclusive,
          "rejection probe: a "
              + inconclusive.promptTokens()
              + "-token prompt proved nothing: "
              + inconclusive.cause());
    }
    if (outcome instanceof RejectionOutcome.Answered answered) {
      String what =
          "rejection probe: a "
              + answered.promptTokens()
              + "-token prompt, "
              + (answered.check().isEmpty()
                  ? "above the engine's admission limit"
                  : "sized to reach the engine's " + answered.check())
              + ", "
              + (answered.streamed()
                  ? "began a streamed answer"
                  : "was answered with HTTP " + answered.status())
              + " ("
              + answered.bodyBytes()
              + " bytes, sha256 "
              + answered.bodySha256().substring(0, 16)
              + ")";
      // The contract: HTTP 200 and 5xx are RejectionPathUnsafe; a stream that starts, like
      // a timeout, is ProbeFailed (the outcome is not known yet). Both keep the gate shut.
      if (answered.streamed()) {
        return new PoolVerdict(
            Verdict.Unknown, GateReason.ProbeFailed, what + "; the engine did not refuse it");
      }
      return new PoolVerdict(
          Verdict.Refused,
          GateReason.RejectionPathUnsafe,
          what
              + "; an over-long prompt must be refused, never answered"
              + (answered.meaning().isEmpty() ? "" : " (" + answered.meaning() + ")")
              + "; "
              + answered.markers().phrase());
    }
    return new PoolVerdict(
        Verdict.Unknown,
        GateReason.ProbeFailed,
        "rejection probe: " + ((RejectionOutcome.Failed) outcome).cause());
  }
}

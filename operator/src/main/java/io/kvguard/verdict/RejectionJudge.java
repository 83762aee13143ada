package io.kvguard.verdict;

/**
 * Judges the over-limit request of the rejection probe: only a refusal that names the length passes. The
 * incident's engine answered such a prompt with HTTP 200 and other customers' data.
 */
public final class RejectionJudge {
  private RejectionJudge() {}

  /**
   * The prompt that reaches whichever rejection path a real over-long prompt hits first: just above the
   * engine's admission limit, min(pool, engine context), or above the pool where the engine admits more.
   */
  public static long promptTokens(PoolObservation observation, long marginTokens) {
    long limit = observation.engineContextTokens().isPresent()
        ? Math.min(observation.poolTokens(), observation.engineContextTokens().getAsLong())
        : observation.poolTokens();
    return Math.addExact(limit, marginTokens);
  }

  /** The verdict for a pod whose pool already passed, given what its engine did with the over-limit prompt. */
  public static PoolVerdict judge(PoolVerdict poolVerdict, RejectionOutcome outcome) {
    if (!poolVerdict.verified()) {
      return poolVerdict;
    }
    if (outcome instanceof RejectionOutcome.Refused refused) {
      if (refused.namesLength()) {
        return new PoolVerdict(Verdict.Verified, GateReason.PoolSufficient, poolVerdict.message()
            + "; a " + refused.promptTokens() + "-token prompt was refused with HTTP " + refused.status());
      }
      return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, "rejection probe: a " + refused.promptTokens()
          + "-token prompt got HTTP " + refused.status() + " without naming the length; cannot tell a length"
          + " refusal from another error");
    }
    if (outcome instanceof RejectionOutcome.Answered answered) {
      String what = "rejection probe: a " + answered.promptTokens() + "-token prompt, above the engine's admission"
          + " limit, " + (answered.streamed() ? "began a streamed answer" : "was answered with HTTP " + answered.status())
          + " (" + answered.bodyBytes() + " bytes, sha256 " + answered.bodySha256().substring(0, 16) + ")";
      // The contract: HTTP 200 and 5xx are RejectionPathUnsafe; a stream that starts, like a
      // timeout, is ProbeFailed (the outcome is not known yet). Both keep the gate shut.
      if (answered.streamed()) {
        return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, what + "; the engine did not refuse it");
      }
      return new PoolVerdict(Verdict.Refused, GateReason.RejectionPathUnsafe,
          what + "; an over-long prompt must be refused, never answered");
    }
    return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed,
        "rejection probe: " + ((RejectionOutcome.Failed) outcome).cause());
  }
}

package io.kvguard.verdict;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/** The one decision function: a pure function of the promise and what the engine reported. */
public final class PoolJudge {

  private PoolJudge() {}

  public static PoolVerdict judge(PoolPolicy policy, ProbeOutcome outcome) {
    if (outcome instanceof ProbeOutcome.Failed failed) {
      return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, failed.cause());
    }
    PoolObservation seen = ((ProbeOutcome.Observed) outcome).observation();
    long pool = seen.poolTokens();
    if (pool < 1) {
      return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, "engine reported a KV pool of " + pool + " tokens");
    }
    long window = policy.contextWindow();
    BigDecimal required = requiredPool(policy);

    // Rules in the order of their reasons' precedence: the first failing one names the verdict.
    List<GateReason> failed = new ArrayList<>();
    List<String> messages = new ArrayList<>();
    if (BigDecimal.valueOf(pool).compareTo(required) < 0) {
      failed.add(GateReason.PoolTooSmall);
      messages.add("KV pool " + pool + " tokens < context window " + window + " × " + policy.minPoolRatio());
    }
    if (seen.engineContextTokens().isPresent()) {
      long engineContext = seen.engineContextTokens().getAsLong();
      if (engineContext < window) {
        failed.add(GateReason.EngineContextTooShort);
        messages.add("engine context " + engineContext + " tokens < context window " + window);
      }
      if (engineContext > pool && !policy.allowEngineContextAbovePool()) {
        failed.add(GateReason.EngineContextExceedsPool);
        messages.add("engine context " + engineContext + " tokens > KV pool " + pool
            + " tokens: prompts between the two reach the engine's over-pool rejection path;"
            + " lower the engine's --context-length to at most the pool");
      }
    }
    if (!failed.isEmpty()) {
      return new PoolVerdict(Verdict.Refused, failed.get(0), String.join("; ", messages));
    }
    String engineContext = seen.engineContextTokens().isPresent()
        ? ", engine context " + seen.engineContextTokens().getAsLong() + " tokens"
        : ", engine reports no context length";
    return new PoolVerdict(Verdict.Verified, GateReason.PoolSufficient,
        "KV pool " + pool + " tokens >= context window " + window + " × " + policy.minPoolRatio() + engineContext);
  }

  /** contextWindow x minPoolRatio, rounded up, computed exactly so no window can overflow it. */
  static BigDecimal requiredPool(PoolPolicy policy) {
    return BigDecimal.valueOf(policy.contextWindow())
        .multiply(BigDecimal.valueOf(policy.minPoolRatio()))
        .setScale(0, RoundingMode.CEILING);
  }
}

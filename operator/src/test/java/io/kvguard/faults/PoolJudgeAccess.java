package io.kvguard.faults;

import io.kvguard.verdict.PoolPolicy;
import java.math.BigDecimal;
import java.math.RoundingMode;

/** The pool a policy requires (window x ratio, rounded up), computed independently of PoolJudge. */
final class PoolJudgeAccess {
  private PoolJudgeAccess() {}

  static long required(PoolPolicy policy) {
    return BigDecimal.valueOf(policy.contextWindow())
        .multiply(BigDecimal.valueOf(policy.minPoolRatio()))
        .setScale(0, RoundingMode.CEILING)
        .longValueExact();
  }
}

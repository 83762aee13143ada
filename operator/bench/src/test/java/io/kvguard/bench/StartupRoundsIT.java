package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The start-up rounds at CI size: each subject sets every gate over its own fresh pods, and a round
 * leaves nothing behind for the next (a ModelDeployment left would add its pods to the next
 * operator's start). No timing is asserted; docs/benchmarks.md has the timed runs.
 */
class StartupRoundsIT {
  @Test
  void eachRoundStartsBothSubjectsOverFreshPodsAndLeavesNothingBehind() throws Exception {
    ScaleBenchmark.quietLogs();
    try (StartupRounds bench = new StartupRounds(20)) {
      StartupRounds.Rounds rounds = bench.run(1, System.out);
      assertThat(rounds.contractFloors()).hasSize(1);
      assertThat(rounds.operators()).hasSize(1);
      // -1 would mean no engine heard from the subject: the gates were set by someone else.
      assertThat(rounds.contractFloors().get(0).firstProbeMillis()).isPositive();
      assertThat(rounds.operators().get(0).firstProbeMillis()).isPositive();
      assertThat(rounds.operators().get(0).wholeMillis())
          .isGreaterThanOrEqualTo(rounds.operators().get(0).firstProbeMillis());
      assertThat(bench.leftBehind()).isZero();
    }
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The due rule on a fixed clock: a period, a tenth of it early (at most a second), five seconds
 * after a failure.
 */
class ProbeDueTest {
  private static final Instant AT = Instant.parse("2026-12-04T06:00:00Z");
  private static final ProbeScheduler.Result<ProbeOutcome> OBSERVED =
      new ProbeScheduler.Result<>(
          "c#0",
          ProbeOutcome.observed(
              new PoolObservation(1_000, OptionalLong.empty(), "1", null, List.of())),
          AT);
  private static final ProbeScheduler.Result<ProbeOutcome> FAILED =
      new ProbeScheduler.Result<>("c#0", ProbeOutcome.failed("connection refused"), AT);

  @Test
  void aLongPeriodFallsDueOneSecondEarly() {
    Duration period = Duration.ofSeconds(60);
    assertThat(ProbeDue.isDue(OBSERVED, period, AT.plusSeconds(58).plusMillis(999))).isFalse();
    assertThat(ProbeDue.isDue(OBSERVED, period, AT.plusSeconds(59))).isTrue();
    assertThat(ProbeDue.nextAt(OBSERVED, period)).isEqualTo(AT.plusSeconds(60));
  }

  @Test
  void aShortPeriodFallsDueATenthOfItEarly() {
    Duration period = Duration.ofSeconds(2);
    assertThat(ProbeDue.isDue(OBSERVED, period, AT.plusMillis(1_799))).isFalse();
    assertThat(ProbeDue.isDue(OBSERVED, period, AT.plusMillis(1_800))).isTrue();
  }

  @Test
  void aFailureIsRetriedAfterFiveSecondsUnlessThePeriodIsShorter() {
    assertThat(ProbeDue.nextAt(FAILED, Duration.ofSeconds(3600))).isEqualTo(AT.plusSeconds(5));
    assertThat(ProbeDue.isDue(FAILED, Duration.ofSeconds(3600), AT.plusMillis(4_499))).isFalse();
    assertThat(ProbeDue.isDue(FAILED, Duration.ofSeconds(3600), AT.plusMillis(4_500))).isTrue();
    assertThat(ProbeDue.nextAt(FAILED, Duration.ofSeconds(2))).isEqualTo(AT.plusSeconds(2));
  }
}

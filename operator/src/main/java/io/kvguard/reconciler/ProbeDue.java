package io.kvguard.reconciler;

import io.kvguard.verdict.ProbeOutcome;
import java.time.Duration;
import java.time.Instant;

/**
 * When a probe result falls due for another probe: the due rule, a pure function of the result and
 * the clock.
 */
final class ProbeDue {
  /** A failed probe is retried after this (or the period, when shorter). */
  static final Duration FAILED_RETRY = Duration.ofSeconds(5);

  private static final Duration MAX_DUE_SLACK = Duration.ofSeconds(1);

  private ProbeDue() {}

  /** A failed probe is retried sooner: a freshly started engine often is not listening yet. */
  static Duration waitAfter(ProbeScheduler.Result<ProbeOutcome> result, Duration period) {
    return result.outcome() instanceof ProbeOutcome.Failed && period.compareTo(FAILED_RETRY) > 0
        ? FAILED_RETRY
        : period;
  }

  /**
   * Due when the wait has passed, or will within a tenth of it (at most a second). The slack lets
   * one pass re-probe every pod of a ModelDeployment whose turn is about to come, rather than a
   * pass per pod a few hundred milliseconds apart (passes are never rescheduled closer than a
   * second, so without it each re-probe also ran up to a second late and drifted).
   */
  static boolean isDue(ProbeScheduler.Result<ProbeOutcome> result, Duration period, Instant now) {
    Duration wait = waitAfter(result, period);
    Duration slack =
        wait.dividedBy(10).compareTo(MAX_DUE_SLACK) < 0 ? wait.dividedBy(10) : MAX_DUE_SLACK;
    return !result.completedAt().plus(wait).minus(slack).isAfter(now);
  }

  /** When the result's turn for a periodic re-probe comes. */
  static Instant nextAt(ProbeScheduler.Result<ProbeOutcome> result, Duration period) {
    return result.completedAt().plus(waitAfter(result, period));
  }
}

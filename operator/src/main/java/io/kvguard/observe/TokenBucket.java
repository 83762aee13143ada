package io.kvguard.observe;

import java.time.Duration;
import java.time.Instant;

/**
 * A passive token bucket, as client-go's spam filter keeps one per source and object ({@code
 * NewTokenBucketPassiveRateLimiterWithClock}): {@code burst} writes at once, then one more each
 * {@code refill}. Not thread-safe: the recorder's writer thread is its only user.
 */
final class TokenBucket {
  private final int burst;
  private final Duration refill;
  private double tokens;
  private Instant updatedAt;

  TokenBucket(int burst, Duration refill, Instant now) {
    this.burst = burst;
    this.refill = refill;
    this.tokens = burst;
    this.updatedAt = now;
  }

  /** Takes one token if there is one. */
  boolean tryTake(Instant now) {
    top(now);
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    return false;
  }

  /** When the next whole token will be there (now, if one is). */
  Instant nextTokenAt(Instant now) {
    top(now);
    if (tokens >= 1) {
      return now;
    }
    return now.plusNanos((long) Math.ceil((1 - tokens) * refill.toNanos()));
  }

  /**
   * True once the bucket is full again, so it can be forgotten without granting anyone more than a
   * burst.
   */
  boolean full(Instant now) {
    top(now);
    return tokens >= burst;
  }

  private void top(Instant now) {
    if (now.isAfter(updatedAt)) {
      tokens =
          Math.min(
              burst,
              tokens + (double) Duration.between(updatedAt, now).toNanos() / refill.toNanos());
      updatedAt = now;
    }
  }
}

package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TokenBucketTest {
  private static final Instant T0 = Instant.parse("2026-12-03T10:00:00Z");

  @Test
  void aBurstAtOnceThenOneTokenPerRefill() {
    TokenBucket bucket = new TokenBucket(25, Duration.ofSeconds(10), T0);
    for (int i = 0; i < 25; i++) {
      assertThat(bucket.tryTake(T0)).as("write %d of the burst", i + 1).isTrue();
    }
    assertThat(bucket.tryTake(T0)).isFalse();
    assertThat(bucket.nextTokenAt(T0)).isEqualTo(T0.plusSeconds(10));
    assertThat(bucket.tryTake(T0.plusSeconds(9))).isFalse();
    assertThat(bucket.tryTake(T0.plusSeconds(10))).isTrue();
    assertThat(bucket.tryTake(T0.plusSeconds(10))).isFalse();
    assertThat(bucket.full(T0.plusSeconds(10))).isFalse();
    // An idle bucket fills up to the burst, never beyond.
    assertThat(bucket.full(T0.plusSeconds(10 + 250))).isTrue();
    int taken = 0;
    while (bucket.tryTake(T0.plusSeconds(10_000))) {
      taken++;
    }
    assertThat(taken).isEqualTo(25);
  }
}

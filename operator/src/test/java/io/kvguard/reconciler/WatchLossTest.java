package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WatchLossTest {
  private static final Instant T0 = Instant.parse("2026-12-07T16:00:00Z");

  private static Instant at(int seconds) {
    return T0.plusSeconds(seconds);
  }

  @Test
  void aWatchDownLongerThanTheBoundIsLostSinceItsFirstSampleDown() {
    WatchLoss loss = new WatchLoss();
    loss.sample(true, at(0));
    loss.sample(false, at(5));
    loss.sample(false, at(50));
    assertThat(loss.lostLongerThan(WatchLoss.BOUND, at(65))).isEmpty();
    assertThat(loss.lostLongerThan(WatchLoss.BOUND, at(66))).contains(at(5));
  }

  @Test
  void aSampleThatFindsTheWatchUpStartsTheCountAgain() {
    // fabric8 reopens each watch every 5 to 10 minutes: two such gaps must not add up.
    WatchLoss loss = new WatchLoss();
    loss.sample(false, at(0));
    loss.sample(true, at(40));
    loss.sample(false, at(45));
    assertThat(loss.lostLongerThan(WatchLoss.BOUND, at(100))).isEmpty();
    assertThat(loss.lostLongerThan(WatchLoss.BOUND, at(106))).contains(at(45));
  }

  @Test
  void eachLossIsAnnouncedOnce() {
    WatchLoss loss = new WatchLoss();
    assertThat(loss.firstAnnouncement()).isFalse();
    loss.sample(false, at(0));
    assertThat(loss.firstAnnouncement()).isTrue();
    assertThat(loss.firstAnnouncement()).isFalse();
    loss.sample(true, at(10));
    loss.sample(false, at(20));
    assertThat(loss.firstAnnouncement()).isTrue();
  }

  @Test
  void passesAreDueOnceTheBoundIsPassedAndAgainEachBoundWhileTheLossLasts() {
    WatchLoss loss = new WatchLoss();
    loss.sample(false, at(0));
    assertThat(loss.passesDue(at(60))).isFalse();
    assertThat(loss.passesDue(at(61))).isTrue();
    assertThat(loss.passesDue(at(90))).isFalse();
    assertThat(loss.passesDue(at(121))).isTrue();
    loss.sample(true, at(125));
    loss.sample(false, at(130));
    assertThat(loss.passesDue(at(150))).isFalse();
    assertThat(loss.passesDue(at(191))).isTrue();
  }

  @Test
  void theBoundOutlastsFabric8sLongestWaitBetweenTwoTriesToReopenAWatch() {
    // kubernetes-client-api v7.5.2: watchReconnectInterval 1000 ms doubled up to 2^5.
    assertThat(WatchLoss.BOUND).isGreaterThan(Duration.ofSeconds(32));
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProbeSchedulerTest {
  private final ExecutorService executor = Executors.newSingleThreadExecutor();
  private final ProbeScheduler<String> scheduler =
      new ProbeScheduler<>(executor, Clock.systemUTC(), why -> "failed: " + why, md -> { });
  private final ProbeScheduler.Key key = new ProbeScheduler.Key(new ResourceID("glm", "inference"), "uid-1");

  @AfterEach
  void close() {
    scheduler.close();
    executor.shutdownNow();
  }

  @Test
  void anAnswerIsPublishedEvenWhenItsListenerThrowsAndTheNextProcessIsProbed() {
    AtomicInteger probes = new AtomicInteger();
    ProbeScheduler.Listener<String> broken = (outcome, took) -> {
      throw new IllegalStateException("metrics broke");
    };
    scheduler.request(key, "container-a", "f", 1, r -> true, () -> "pool of a #" + probes.incrementAndGet(), broken);
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.result(key).isPresent());
    assertThat(scheduler.result(key).orElseThrow().isFor("container-a", "f")).isTrue();

    // Nothing is left "in flight": the restarted container is probed, and its answer replaces the old one.
    scheduler.request(key, "container-b", "f", 1, r -> true, () -> "pool of b #" + probes.incrementAndGet(), broken);
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.result(key).orElseThrow().isFor("container-b", "f"));
    assertThat(scheduler.result(key).orElseThrow().outcome()).isEqualTo("pool of b #2");
  }
}

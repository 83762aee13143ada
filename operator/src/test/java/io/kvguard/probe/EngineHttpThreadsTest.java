package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testkit.EngineShapes;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import org.junit.jupiter.api.Test;

/**
 * Thousands of engines are probed every period: a probe must not cost a thread. The JDK's {@code
 * sendAsync} completes every answer on CompletableFuture's default executor, which on machines with
 * fewer than three CPUs (the chart's one-CPU limit, the two-core CI machines) starts a thread per
 * answer.
 */
class EngineHttpThreadsTest {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  @Test
  void probesReuseThreadsInsteadOfStartingOnePerAnswer() throws Exception {
    try (Probing probing = new Probing(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000))) {
      for (int i = 0; i < 10; i++) { // warm-up: the client's worker and selector threads start here
        probing.http.getOk(probing.endpoint(), "/server_info");
      }
      long before = THREADS.getTotalStartedThreadCount();
      int answers = 100;
      for (int i = 0; i < answers; i++) {
        assertThat(probing.http.getOk(probing.endpoint(), "/server_info").status()).isEqualTo(200);
      }
      long started = THREADS.getTotalStartedThreadCount() - before;
      assertThat(started)
          .as("threads started in the JVM during %d probe GETs", answers)
          .isLessThan(answers / 10);
    }
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TenantFairExecutorTest {
  private final CountDownLatch hang = new CountDownLatch(1);
  private TenantFairExecutor executor;

  @AfterEach
  void stop() throws InterruptedException {
    hang.countDown();
    executor.close();
    assertThat(executor.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
  }

  private Runnable hanging() {
    return () -> {
      try {
        hang.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  @Test
  void aNamespaceOfHangingProbesHoldsOnlyItsOwnSlots() {
    executor = new TenantFairExecutor("test-probe", 8, 2);
    for (int i = 0; i < 40; i++) {
      executor.submit("attacker", hanging());
    }
    CountDownLatch innocent = new CountDownLatch(3);
    for (String tenant : List.of("team-a", "team-b", "team-c")) {
      executor.submit(tenant, innocent::countDown);
    }

    await().atMost(Duration.ofSeconds(2)).until(() -> innocent.getCount() == 0);
    assertThat(executor.load().get("attacker")).containsExactly(38, 2);
  }

  @Test
  void freedThreadsServeNamespacesInTurn() throws Exception {
    executor = new TenantFairExecutor("test-probe", 1, 1);
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    executor.submit(
        "a",
        () -> {
          running.countDown();
          try {
            first.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(running.await(2, TimeUnit.SECONDS)).isTrue();
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      executor.submit("a", () -> order.add("a"));
    }
    executor.submit("b", () -> order.add("b"));
    executor.submit("c", () -> order.add("c"));
    first.countDown();

    await().atMost(Duration.ofSeconds(2)).until(() -> order.size() == 5);
    // a's three came first, but b and c each get a turn before a's second.
    assertThat(order).containsExactly("a", "b", "c", "a", "a");
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().isEmpty());
  }
}

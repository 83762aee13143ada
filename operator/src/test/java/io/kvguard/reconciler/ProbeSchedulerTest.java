package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProbeSchedulerTest {
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final Set<ResourceID> told = ConcurrentHashMap.newKeySet();
  private final ProbeScheduler<String> scheduler =
      new ProbeScheduler<>(
          (tenant, task) -> executor.execute(task),
          Clock.systemUTC(),
          why -> "failed: " + why,
          told::add);
  private final ResourceID glm = new ResourceID("glm", "inference");
  private final ProbeScheduler.Key key = new ProbeScheduler.Key("uid-1", "sglang|http|30000|5||");

  @AfterEach
  void close() {
    scheduler.close();
    executor.shutdownNow();
  }

  private void request(ResourceID who, String identity, java.util.function.Supplier<String> probe) {
    scheduler.request(
        key, who, "inference", identity, r -> true, Optional::empty, probe, (outcome, took) -> {});
  }

  @Test
  void anAnswerIsPublishedEvenWhenItsListenerThrowsAndTheNextProcessIsProbed() {
    AtomicInteger probes = new AtomicInteger();
    ProbeScheduler.Listener<String> broken =
        (outcome, took) -> {
          throw new IllegalStateException("metrics broke");
        };
    scheduler.request(
        key,
        glm,
        "inference",
        "container-a",
        r -> true,
        Optional::empty,
        () -> "pool of a #" + probes.incrementAndGet(),
        broken);
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.result(key, glm).isPresent());
    assertThat(scheduler.result(key, glm).orElseThrow().isFor("container-a")).isTrue();

    // Nothing is left "in flight": the restarted container is probed, and its answer replaces the
    // old one.
    scheduler.request(
        key,
        glm,
        "inference",
        "container-b",
        r -> true,
        Optional::empty,
        () -> "pool of b #" + probes.incrementAndGet(),
        broken);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> scheduler.result(key, glm).orElseThrow().isFor("container-b"));
    assertThat(scheduler.result(key, glm).orElseThrow().outcome()).isEqualTo("pool of b #2");
  }

  @Test
  void fortyPoliciesAskingOnePodAlikeShareOneProbeAndAreAllTold() throws Exception {
    CountDownLatch hold = new CountDownLatch(1);
    AtomicInteger probes = new AtomicInteger();
    List<ResourceID> policies =
        IntStream.range(0, 40).mapToObj(i -> new ResourceID("policy-" + i, "attacker")).toList();
    for (ResourceID policy : policies) {
      request(
          policy,
          "container-a",
          () -> {
            probes.incrementAndGet();
            try {
              hold.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return "pool";
          });
    }
    hold.countDown();

    await().atMost(Duration.ofSeconds(5)).until(() -> told.size() == 40);
    assertThat(probes).hasValue(1);
    assertThat(told).containsExactlyInAnyOrderElementsOf(policies);
  }

  @Test
  void aProbeCalledOffBeforeItIsSentIsNeverSent() {
    AtomicInteger probes = new AtomicInteger();
    scheduler.request(
        key,
        glm,
        "inference",
        "container-a",
        r -> true,
        () -> Optional.of("pod is gone"),
        () -> "pool #" + probes.incrementAndGet(),
        (outcome, took) -> {});
    // Asking again works once it is settled (nothing is left in flight), and this time it is sent.
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              request(glm, "container-a", () -> "pool #" + probes.incrementAndGet());
              assertThat(scheduler.result(key, glm)).isPresent();
            });
    assertThat(scheduler.result(key, glm).orElseThrow().outcome()).isEqualTo("pool #1");
  }

  @Test
  void whatNoPolicyUsesAnyMoreIsDropped() {
    ResourceID other = new ResourceID("other", "inference");
    request(glm, "container-a", () -> "pool");
    request(other, "container-a", () -> "pool");
    await().atMost(Duration.ofSeconds(5)).until(() -> scheduler.result(key, glm).isPresent());

    scheduler.forget("uid-1", glm);
    assertThat(scheduler.result(key, other)).as("still used by the other policy").isPresent();
    // The other policy now asks the pod another way (its spec changed): the old way goes.
    ProbeScheduler.Key edited = new ProbeScheduler.Key("uid-1", "sglang|http|30000|7||");
    scheduler.retain(other, Set.of(edited));
    assertThat(scheduler.result(key, other)).isEmpty();
    scheduler.forget("uid-1", other);
    assertThat(scheduler.size()).isZero();
  }
}

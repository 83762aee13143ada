package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.micrometer.core.instrument.Meter;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, slow leaks: policies created and deleted under new names must not grow the operator.
 * Every meter of a deleted ModelDeployment (pod gauges, windows, per-role counters and timers,
 * Event-write counters once its last Events are written) goes with it; only a failed hand-back's
 * counter is kept, on purpose (HandBackIT). Took about 20 to 80 s for 200 policies on a 2-core
 * machine, as loaded.
 */
class PolicyChurnIT extends EmbeddedClusterTest {
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final int POLICIES = 200;

  private void createAndAwait(String name) {
    ModelDeployment md = h.modelDeployment(name, 1_048_576, role("serve", Engine.SGLANG, SERVE));
    h.create(md);
  }

  private java.util.Set<String> meterIds() {
    return h.registry.getMeters().stream()
        .map(m -> m.getId().toString())
        .collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
  }

  private static boolean isKvguards(String meterId) {
    return meterId.startsWith("MeterId{name='kvguard.");
  }

  private long kvguardMeters() {
    return h.registry.getMeters().stream()
        .map(Meter::getId)
        .filter(id -> id.getName().startsWith("kvguard."))
        .count();
  }

  @Test
  void theRegistryIsBackWhereItStartedAfterHundredsOfPoliciesCameAndWent() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000)));
    // A first policy comes and goes, so the operator's own lazily made meters exist before the
    // count.
    createAndAwait("warm-up");
    awaitGate("serve-0", "True", "PoolSufficient");
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("warm-up")
        .delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> h.get("warm-up") == null);
    await().atMost(Duration.ofSeconds(10)).until(() -> kvguardMeters() == 1); // kvguard_build_info
    java.util.Set<String> before = meterIds();
    long started = System.nanoTime();

    IntStream.range(0, POLICIES).forEach(i -> createAndAwait("churn-" + i));
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                IntStream.range(0, POLICIES)
                    .forEach(
                        i ->
                            assertThat(h.status("churn-" + i).verified)
                                .as("churn-" + i)
                                .isEqualTo("1/1")));
    System.out.printf(
        "policy-churn: %d policies verified after %d ms%n",
        POLICIES, (System.nanoTime() - started) / 1_000_000);
    assertThat(meterIds().size())
        .as("each policy has its own meters while it exists")
        .isGreaterThanOrEqualTo(before.size() + 2 * POLICIES);

    // One after another, as policies come and go: all at once, the two hundred hand-backs of the
    // one pod race each other (each is told "the pod's gate kept changing"), and a failed
    // hand-back's counter is kept on purpose.
    for (int i = 0; i < POLICIES; i++) {
      String name = "churn-" + i;
      h.client
          .resources(ModelDeployment.class)
          .inNamespace(OperatorHarness.NAMESPACE)
          .withName(name)
          .delete();
      await().atMost(Duration.ofSeconds(30)).until(() -> h.get(name) == null);
    }

    System.out.printf(
        "policy-churn: deleted after %d ms%n", (System.nanoTime() - started) / 1_000_000);
    // kvguard's own meters are back to exactly what they were; JOSDK's are aggregates (one per
    // outcome, retry count or exception class, never per resource), so they may gain an outcome but
    // never a policy. The one exception: a hand-back that lost its race against the other policies'
    // passes on the same pod is counted in kvguard.gate.write.failures{during=handback}, kept on
    // purpose after its policy is gone (HandBackIT: the alert on it must still see it). Such a
    // counter exists only for a hand-back that really failed.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(meterIds())
                    .as("meters after %d policies came and went", POLICIES)
                    .filteredOn(PolicyChurnIT::isKvguards)
                    .filteredOn(id -> !isFailedHandBack(id))
                    .containsExactlyElementsOf(
                        before.stream().filter(PolicyChurnIT::isKvguards).toList()));
    assertThat(h.registry.getMeters())
        .filteredOn(meter -> !isFailedHandBack(meter.getId().toString()))
        .allSatisfy(
            meter ->
                assertThat(meter.getId().getTags())
                    .noneMatch(
                        tag ->
                            tag.getValue().startsWith("churn-")
                                || tag.getValue().equals("serve-0")));
    assertThat(meterIds().size()).isLessThan(before.size() + 10);
  }

  private static boolean isFailedHandBack(String meterId) {
    return meterId.startsWith("MeterId{name='kvguard.gate.write.failures'")
        && meterId.contains("tag(during=handback)");
  }
}

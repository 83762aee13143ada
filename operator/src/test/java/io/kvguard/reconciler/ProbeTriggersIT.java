package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * When engines are probed: once per new process, once per period, once per spec change, never in a
 * storm.
 */
class ProbeTriggersIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private ModelDeployment withPeriod(int seconds) {
    ModelDeployment md = h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE));
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(seconds);
    md.getSpec().setProbe(probe);
    return md;
  }

  private double closings() {
    var counter = h.registry.find("kvguard.gate.transitions").tag("status", "False").counter();
    return counter == null ? 0 : counter.count();
  }

  private void awaitOpen() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
  }

  @Test
  void anUnchangedEngineIsReprobedOncePerPeriod() {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, engine);
    h.create(withPeriod(2));
    awaitOpen();
    long first = engine.hits("/server_info");
    long since = System.nanoTime();

    // A window of periods with nothing changing: one probe per 2 s period, not one per reconcile.
    // The operator is stopped before counting, so no probe lands between the two counters read
    // below.
    await().pollDelay(Duration.ofSeconds(7)).atMost(Duration.ofSeconds(8)).until(() -> true);
    h.stopOperator();
    double periods = (System.nanoTime() - since) / 1e9 / 2;
    long more = engine.hits("/server_info") - first;
    assertThat((double) more).isBetween(Math.floor(periods) - 1, Math.ceil(periods));
    // Each probe is the two GETs of an SGLang probe, no more (one cut off by the stop may still
    // finish).
    await()
        .atMost(Duration.ofSeconds(6))
        .untilAsserted(
            () -> assertThat(engine.hits("/v1/models")).isEqualTo(engine.hits("/server_info")));
  }

  @Test
  void aSpecChangeReprobesWithoutShuttingTheGate() {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, engine);
    h.create(withPeriod(3600));
    awaitOpen();
    long before = engine.hits("/server_info");
    double closedBefore = closings();

    h.editSpec(
        "glm",
        spec -> {
          spec.getRoles().get(0).setMinReadyPods(1);
          spec.setMinPoolRatio(1.5);
        });

    await().atMost(Duration.ofSeconds(10)).until(() -> engine.hits("/server_info") > before);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(h.status("glm").observedGeneration)
                    .isEqualTo(h.get("glm").getMetadata().getGeneration()));
    // 2,040,000 >= 1,048,576 x 1.5: still open, and the gate was never written shut.
    assertThat(h.gate("serve-0").orElseThrow().getStatus()).isEqualTo("True");
    assertThat(h.gate("serve-0").orElseThrow().getMessage()).contains("× 1.5");
    assertThat(closings()).isEqualTo(closedBefore);
  }

  @Test
  void aFailedProbeIsRetriedWithinSecondsNotAfterAFullPeriod() {
    FakeEngine engine = h.engine(Map.of("/server_info", FakeEngine.Answer.status(503)));
    h.pod("serve-0", SERVE, engine);
    h.create(withPeriod(3600));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("ProbeFailed")));

    engine.serve(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(
                        c -> assertThat(c.getReason()).isEqualTo("PoolSufficient")));
  }
}

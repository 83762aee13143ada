package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.kvguard.customresource.AdvisoryMode;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The GLM-5.3 incident of shared/incident.md, replayed against the operator as production wires it.
 * The engines report SGLang 0.5.22, the release the post-mortem alone names as fixed: restarting
 * prefill with a larger pool clears the pool, not the prefill/decode path, so every pod stays shut
 * until the platform team accepts the advisory's risk knowingly ({@code engineAdvisories:
 * Disabled}, after testing the route through the router by hand).
 */
class IncidentReplayIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;

  @Test
  void prefillPoolBelowTheWindowIsGatedUntilTheEnginesRestartWithALargerPool() {
    FakeEngine prefillEngine0 =
        h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280, 681_280));
    FakeEngine prefillEngine1 =
        h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280, 681_280));
    FakeEngine decodeEngine =
        h.engine(EngineShapes.sglang(WINDOW, "decode", "0.5.22", 4_000_000, 4_000_000));
    h.pod("glm-prefill-0", Map.of("app", "glm", "role", "prefill"), prefillEngine0);
    h.pod("glm-prefill-1", Map.of("app", "glm", "role", "prefill"), prefillEngine1);
    h.pod("glm-decode-0", Map.of("app", "glm", "role", "decode"), decodeEngine);
    ModelDeployment md =
        h.modelDeployment(
            "glm",
            WINDOW,
            role("prefill", Engine.SGLANG, Map.of("app", "glm", "role", "prefill")),
            role("decode", Engine.SGLANG, Map.of("app", "glm", "role", "decode")));
    h.create(md);

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.gate("glm-prefill-0"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("PoolTooSmall");
                        assertThat(c.getMessage())
                            .contains("KV pool 681280 tokens < context window 1048576 × 1.0");
                      });
              assertThat(h.gate("glm-prefill-1"))
                  .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolTooSmall"));
              // Decode's pool holds the window, but its version cannot prove the path.
              assertThat(h.gate("glm-decode-0"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("KnownUnsafeEngine");
                        assertThat(c.getMessage())
                            .contains(
                                "reaching release 0.5.22 does not clear advisory"
                                    + " sglang-pd-abort-before-0.5.22",
                                "post-mortem alone",
                                "--pd-router");
                      });
              assertThat(h.condition("glm", "Ready")).hasValue("False");
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.labelled("glm-prefill-0")).isFalse();
              assertThat(h.labelled("glm-decode-0")).isFalse();
              assertThat(h.events())
                  .extracting(Event::getReason)
                  .contains("PoolTooSmall", "KnownUnsafeEngine");
              assertThat(h.status("glm").verified).isEqualTo("0/3");
            });

    // The fix: the prefill engines restart with twice the window.
    prefillEngine0.serve(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_040_000, 2_040_000));
    prefillEngine1.serve(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_040_000, 2_040_000));
    h.pods.restartEngine(OperatorHarness.NAMESPACE, "glm-prefill-0");
    h.pods.restartEngine(OperatorHarness.NAMESPACE, "glm-prefill-1");

    // The pool is fixed; the path is not proven by the version.
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              for (String pod : java.util.List.of("glm-prefill-0", "glm-prefill-1")) {
                assertThat(h.gate(pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("False");
                          assertThat(c.getReason()).isEqualTo("KnownUnsafeEngine");
                          assertThat(c.getMessage()).doesNotContain("KV pool 681280");
                        });
              }
              assertThat(h.condition("glm", "Ready")).hasValue("False");
            });

    // The platform team tested the route through the router by hand and accepts the advisory's
    // risk knowingly.
    h.editSpec("glm", spec -> spec.setEngineAdvisories(AdvisoryMode.Disabled));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.gate("glm-prefill-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(h.gate("glm-decode-0"))
                  .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolSufficient"));
              assertThat(h.gate("glm-prefill-1"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(h.labelled("glm-prefill-0")).isTrue();
              assertThat(h.condition("glm", "Ready")).hasValue("True");
              assertThat(h.condition("glm", "PoolsVerified")).hasValue("True");
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo("3/3"));
    // Each transition is announced once, however many passes saw it.
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              // (EngineAdvisoryWarning, issue 16 item 9, is no verdict transition: SGLang 0.5.22
              // with prefill/decode is warned about issues #30233 and #32605 once per pod.)
              assertThat(h.eventHistory())
                  .filteredOn(e -> e.getMessage().contains("glm-prefill-0 "))
                  .filteredOn(e -> !e.getReason().equals("EngineAdvisoryWarning"))
                  .extracting(Event::getReason)
                  .containsExactly("PoolTooSmall", "KnownUnsafeEngine", "PoolVerified");
              assertThat(h.eventHistory())
                  .filteredOn(e -> e.getMessage().contains("glm-prefill-0 "))
                  .filteredOn(e -> e.getReason().equals("EngineAdvisoryWarning"))
                  .hasSize(1);
            });
  }
}

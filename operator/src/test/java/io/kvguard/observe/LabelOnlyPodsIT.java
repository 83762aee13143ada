package io.kvguard.observe;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The other side of the webhook's failurePolicy Ignore (issue 18 §1): a selected pod without the
 * readiness gate (created before its ModelDeployment, or admitted while the webhook did not answer)
 * is held back by the routing label only, and kvguard says so: status count and role note, a
 * Warning event, a metric.
 */
class LabelOnlyPodsIT {
  private static final long WINDOW = 131_072;

  @Test
  void aSelectedPodWithoutTheGateIsCountedNamedAnnouncedAndMeasured() {
    try (OperatorHarness h = new OperatorHarness()) {
      FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 262_144));
      h.pods.createRunning(
          OperatorHarness.NAMESPACE, "glm-old-0", Map.of("app", "glm"), engine.port(), false);
      h.pod("glm-new-0", Map.of("app", "glm"), engine);
      h.start();

      h.create(
          h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, Map.of("app", "glm"))));

      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                ModelDeploymentStatus status = h.status("glm");
                assertThat(status).isNotNull();
                assertThat(status.verified).isEqualTo("2/2");
                assertThat(status.labelOnlyPods).isEqualTo(1);
                assertThat(status.roles.get(0).notes)
                    .anySatisfy(
                        note ->
                            assertThat(note)
                                .startsWith(
                                    "LabelOnly: 1 pod without the kvguard.io/pool-verified readiness gate")
                                .contains("glm-old-0")
                                .contains("rollout restart")
                                .doesNotContain("glm-new-0"));
                assertThat(h.events())
                    .anySatisfy(
                        e -> {
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getReason()).isEqualTo("LabelOnlyPods");
                          assertThat(e.getMessage())
                              .contains("glm-old-0")
                              .contains("rollout restart")
                              .doesNotContain("glm-new-0");
                        });
                assertThat(h.registry.scrape())
                    .contains(
                        "kvguard_label_only_pods{modeldeployment=\"glm\",namespace=\"inference\",role=\"serve\"} 1.0");
              });
      // The gated pod is verified through its condition and label; the label-only one only through
      // the label.
      assertThat(h.labelled("glm-old-0")).isTrue();
      assertThat(h.labelled("glm-new-0")).isTrue();
    }
  }
}

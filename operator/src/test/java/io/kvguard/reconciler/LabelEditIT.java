package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.gate.GateNames;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, attack 3: anyone who may patch a pod's labels can make a policy stop selecting it.
 * Before, the policy then handed the pod back open (PolicyRemoved), so a pod kvguard shut
 * PoolTooSmall became Ready and Services on its remaining labels routed to it. A policy that still
 * exists keeps such a pod shut; only deleting the ModelDeployment hands its pods back open.
 */
class LabelEditIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private void dropRoleLabel(String pod) {
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(pod)
        .edit(
            p -> {
              p.getMetadata().getLabels().remove("role");
              return p;
            });
  }

  @Test
  void aRefusedPodThatLosesASelectorLabelStaysShut() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");

    dropRoleLabel("serve-0");

    awaitGate("serve-0", "False", "NoLongerSelected");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("ModelDeployment glm", "still exists");
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(6))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled("serve-0")).isFalse();
            });
  }

  @Test
  void aVerifiedPodThatLeavesThePolicyLosesItsGateAndLabelUntilTheLabelsReturn() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled("serve-0"));

    dropRoleLabel("serve-0");
    awaitGate("serve-0", "False", "NoLongerSelected");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.labelled("serve-0")).isFalse();
              assertThat(h.getPod("serve-0").getMetadata().getAnnotations())
                  .doesNotContainKey(GateNames.VERDICTS_ANNOTATION);
            });

    // The labels come back: the policy selects the pod again and proves it again.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            p -> {
              p.getMetadata().getLabels().put("role", "serve");
              return p;
            });
    awaitGate("serve-0", "True", "PoolSufficient");
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled("serve-0"));
  }

  @Test
  void deletingThePolicyStillHandsItsSelectedPodsBackOpen() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");

    h.client.resource(h.get("glm")).delete();

    awaitGate("serve-0", "True", "PolicyRemoved");
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
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
  void aRefusedPodRelabelledUnderAnAuditPolicyStaysShut() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    ModelDeployment trial =
        h.modelDeployment(
            "trial", WINDOW, role("canary", Engine.SGLANG, Map.of("app", "glm", "role", "canary")));
    trial.getSpec().setEnforcement(Enforcement.Audit);
    h.create(trial);
    awaitGate("serve-0", "False", "PoolTooSmall");

    // Only the Audit policy selects the pod now: it never held the gate shut, so it may not open
    // it.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            p -> {
              p.getMetadata().getLabels().put("role", "canary");
              return p;
            });

    awaitGate("serve-0", "False", "NoLongerSelected");
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(8))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled("serve-0")).isFalse();
            });
  }

  @Test
  void aPodLeavingWithItsRecordRemovedByHandIsLetGoShutThoughTheStatusDoesNotListIt() {
    // More pods than status.pods lists (50), all served by one engine: one of them is named only by
    // the record on the pod itself, which a tenant may remove together with a selector label.
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    for (int i = 0; i <= StatusFactory.MAX_LISTED_PODS; i++) {
      h.pod(String.format("serve-%02d", i), SERVE, engine);
    }
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    int all = StatusFactory.MAX_LISTED_PODS + 1;
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo(all + "/" + all));
    Set<String> listed = h.status("glm").pods.stream().map(p -> p.name).collect(Collectors.toSet());
    String unlisted =
        h.client.pods().inNamespace(OperatorHarness.NAMESPACE).list().getItems().stream()
            .map(p -> p.getMetadata().getName())
            .filter(name -> !listed.contains(name))
            .findFirst()
            .orElseThrow();
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled(unlisted));

    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(unlisted)
        .edit(
            p -> {
              p.getMetadata().getLabels().remove("role");
              p.getMetadata().getAnnotations().remove(GateNames.VERDICTS_ANNOTATION);
              return p;
            });

    awaitGate(unlisted, "False", "NoLongerSelected");
    await().atMost(Duration.ofSeconds(10)).until(() -> !h.labelled(unlisted));
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

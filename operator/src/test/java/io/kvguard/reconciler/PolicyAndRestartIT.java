package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Policies that disagree, specs that cannot be applied, selectors that match nothing, and operator
 * restarts.
 */
class PolicyAndRestartIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  @Test
  void whenTwoPoliciesSelectOnePodTheStrictestVerdictWinsAndBothSaySo() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm-1m", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    h.create(h.modelDeployment("glm-4m", 4_194_304, role("serve", Engine.SGLANG, SERVE)));

    awaitGate("serve-0", "False", "PoolTooSmall");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .startsWith("ModelDeployment glm-4m: KV pool 2040000");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              for (String name : List.of("glm-1m", "glm-4m")) {
                assertThat(h.status(name).conditions)
                    .anySatisfy(c -> assertThat(c.getMessage()).contains("ConflictingPolicies"));
              }
              assertThat(h.status("glm-1m").pods.get(0).reason).isEqualTo("PoolSufficient");
            });
    // Settled: the two policies agree on one decision and stop writing the pod.
    h.api.clearRequests();
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(h.api.requests())
                    .noneMatch(r -> r.method().equals("PATCH") && r.path().contains("/pods/")));
  }

  @Test
  void everyMatchLabelAndExpressionOnlySelectorsPickTheirPodsAndARelabelledPodChangesPolicy() {
    Map<String, String> batch = Map.of("app", "glm", "role", "batch");
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.pod("batch-0", batch, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000)));
    // Both pods carry app=glm; only serve-0 carries every matchLabel of "glm-serve".
    h.create(h.modelDeployment("glm-serve", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    RoleSpec byExpression = role("batch", Engine.SGLANG, Map.of());
    byExpression.setSelector(
        new LabelSelectorBuilder()
            .withMatchExpressions(
                new LabelSelectorRequirementBuilder()
                    .withKey("role")
                    .withOperator("In")
                    .withValues("batch")
                    .build())
            .build());
    // The batch policy promises a larger window, so moving to it changes the verdict.
    h.create(h.modelDeployment("glm-batch", 4 * WINDOW, byExpression));

    awaitGate("serve-0", "True", "PoolSufficient");
    awaitGate("batch-0", "False", "PoolTooSmall");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.status("glm-serve").pods)
                  .extracting(p -> p.name)
                  .containsExactly("serve-0");
              assertThat(h.status("glm-batch").pods)
                  .extracting(p -> p.name)
                  .containsExactly("batch-0");
            });

    // serve-0 moves to the batch role: glm-serve lets go of it, glm-batch judges it under its own
    // window.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            pod -> {
              pod.getMetadata().getLabels().put("role", "batch");
              return pod;
            });
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.status("glm-serve").pods).isEmpty();
              assertThat(h.status("glm-batch").pods)
                  .extracting(p -> p.name)
                  .containsExactly("batch-0", "serve-0");
              assertThat(h.status("glm-batch").pods.get(1).reason).isEqualTo("PoolTooSmall");
            });
    awaitGate("serve-0", "False", "PoolTooSmall");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("context window " + 4 * WINDOW);
  }

  @Test
  void aSelectorThatMatchesNothingIsNotReadyWithReasonNoPods() {
    h.create(
        h.modelDeployment(
            "glm", WINDOW, role("serve", Engine.SGLANG, Map.of("app", "nothing-here"))));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              ModelDeployment md = h.get("glm");
              assertThat(md.getStatus()).isNotNull();
              assertThat(md.getStatus().conditions)
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("Ready");
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("NoPods");
                      });
              assertThat(md.getStatus().verified).isEqualTo("0/0");
            });
  }

  @Test
  void aSelectorTheCrdCannotValidateIsReportedAsInvalidSpecAndGatesNothingOpen() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    RoleSpec role = role("serve", Engine.SGLANG, SERVE);
    role.setSelector(
        new LabelSelectorBuilder()
            .withMatchLabels(SERVE)
            .withMatchExpressions(
                new LabelSelectorRequirementBuilder()
                    .withKey("tier")
                    .withOperator("Near")
                    .withValues("gpu")
                    .build())
            .build());
    h.create(h.modelDeployment("glm", WINDOW, role));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.status("glm").conditions)
                    .anySatisfy(
                        c -> {
                          assertThat(c.getType()).isEqualTo("InvalidSpec");
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getMessage()).contains("unknown operator Near");
                        }));
    assertThat(h.gate("serve-0")).isEmpty();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
  }

  @Test
  void aSpecEditedIntoOneKvguardCannotApplyHoldsItsPodsShutUntilThePolicyIsDeleted() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    awaitGate("serve-1", "False", "PoolTooSmall");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());

    // A lower-case operator: the CRD takes any string, kvguard cannot apply it.
    h.editSpec(
        "glm",
        spec ->
            spec.getRoles()
                .get(0)
                .setSelector(
                    new LabelSelectorBuilder()
                        .withMatchLabels(SERVE)
                        .withMatchExpressions(
                            new LabelSelectorRequirementBuilder()
                                .withKey("tier")
                                .withOperator("in")
                                .withValues("gpu")
                                .build())
                        .build()));

    // Neither pod is handed back open: the verified one is shut and loses its label, the refused
    // one stays shut.
    awaitGate("serve-0", "False", "ProbeFailed");
    assertThat(h.gate("serve-0").orElseThrow().getMessage()).contains("unknown operator in");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
    awaitGate("serve-1", "False", "ProbeFailed");
    await()
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").conditions)
                  .anySatisfy(
                      c -> {
                        assertThat(c.getType()).isEqualTo("InvalidSpec");
                        assertThat(c.getStatus()).isEqualTo("True");
                      });
              assertThat(h.status("glm").pods)
                  .extracting(p -> p.name)
                  .containsExactly("serve-0", "serve-1");
            });

    // Deleting the broken policy still hands both back, because it kept them listed.
    h.client.resource(h.get("glm")).delete();
    awaitGate("serve-0", "True", "PolicyRemoved");
    awaitGate("serve-1", "True", "PolicyRemoved");
    await().untilAsserted(() -> assertThat(h.get("glm")).isNull());
  }

  @Test
  void aRestartedOperatorDoesNotFlapTheGatesOfPodsVerifiedForTheirCurrentContainer() {
    FakeEngine big = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    FakeEngine small = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000));
    h.pod("serve-0", SERVE, big);
    h.pod("serve-1", SERVE, small);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    awaitGate("serve-1", "False", "PoolTooSmall");
    await().untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo("1/2"));

    h.stopOperator();
    h.api.clearRequests();
    long bigProbes = big.hits("/server_info");
    long smallProbes = small.hits("/server_info");
    h.start();
    // The new leader has acted once it re-probed both engines (its own probes, after the
    // carried-over verdicts);
    // the only writes it may make are to the ModelDeployment.
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(big.hits("/server_info")).isGreaterThan(bigProbes);
              assertThat(small.hits("/server_info")).isGreaterThan(smallProbes);
            });
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(h.labelled("serve-0")).isTrue();
              assertThat(h.gate("serve-1"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
            });
    List<EmbeddedApiServer.Request> podWrites =
        h.api.requests().stream()
            .filter(r -> r.method().equals("PATCH") && r.path().contains("/pods/"))
            .toList();
    assertThat(podWrites).isEmpty();
  }
}

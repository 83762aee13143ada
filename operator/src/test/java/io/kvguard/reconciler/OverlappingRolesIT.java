package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.SimulatedPods;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A pod selected by two roles of one ModelDeployment is judged by the first role that selects it
 * (the order of {@code spec.roles}). The second role asks the pod another way (another engine,
 * another port): its probes would answer for a verdict nobody uses, send the policy's credentials
 * to a port that role names, and count probe failures under a role the pod is not judged by. Before
 * the pass resolved duplicates at selection, every pass assessed the pod once per role, asked both
 * ways, and then threw the second answer away.
 */
class OverlappingRolesIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> LABELS = Map.of("app", "glm");

  @Test
  void aPodSelectedByTwoRolesIsAskedOnlyAsItsFirstRoleAsks() {
    FakeEngine first = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    FakeEngine second = h.engine(EngineShapes.vllm(WINDOW, 200_000, 16));
    h.pod("both-0", LABELS, first);
    // The engine container also declares the second role's port, so that role could probe the pod.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("both-0")
        .edit(
            pod -> {
              pod.getSpec().getContainers().stream()
                  .filter(c -> c.getName().equals(SimulatedPods.ENGINE_CONTAINER))
                  .findFirst()
                  .orElseThrow()
                  .getPorts()
                  .add(
                      new ContainerPortBuilder()
                          .withName("canary")
                          .withContainerPort(second.port())
                          .build());
              return pod;
            });
    RoleSpec canary = role("canary", Engine.VLLM, LABELS);
    canary.setPort(new IntOrString("canary"));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, LABELS), canary));

    awaitGate("both-0", "True", "PoolSufficient");
    // A few more passes (the gate write, its watch events) give a second probe time to go out.
    await().pollDelay(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> true);

    ModelDeploymentStatus status = h.status("glm");
    assertThat(status.pods)
        .singleElement()
        .satisfies(pod -> assertThat(pod.role).isEqualTo("serve"));
    assertThat(first.hits("/server_info")).isPositive();
    assertThat(second.totalHits()).as("requests to the second role's engine port").isZero();
    assertThat(h.registry.find("kvguard.probe.duration").tag("role", "canary").timer()).isNull();
  }
}

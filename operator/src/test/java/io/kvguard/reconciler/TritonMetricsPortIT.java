package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerPortBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.SimulatedPods;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Triton serves its metrics on its metrics port (8002 by default), not on the inference port: the
 * role names it as metricsPort, and the block count read there is an upper bound of the GPU pool
 * until the role declares it exact.
 */
class TritonMetricsPortIT {
  private static final long WINDOW = 131_072;
  private static final Map<String, String> LABELS = Map.of("app", "triton");
  private OperatorHarness h;

  @BeforeEach
  void start() {
    h = new OperatorHarness().start();
  }

  @AfterEach
  void stop() {
    h.close();
  }

  private PodCondition awaitGate(String pod, String status, String reason) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(h.gate(pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo(reason);
                          assertThat(c.getStatus()).isEqualTo(status);
                        }));
    return h.gate(pod).orElseThrow();
  }

  @Test
  void theMetricsPortIsReadAndTheBlockCountVerifiesOnlyOnTheRolesDeclaration() {
    FakeEngine inference = h.engine(Map.of("/v2/health/ready", Answer.json("{}")));
    FakeEngine metrics = h.engine(EngineShapes.tritonTrtllm(6239, 64));
    h.pod("triton-0", LABELS, inference);
    // The engine container declares its metrics port by name, as a Triton pod template does.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("triton-0")
        .edit(
            pod -> {
              pod.getSpec().getContainers().stream()
                  .filter(c -> c.getName().equals(SimulatedPods.ENGINE_CONTAINER))
                  .findFirst()
                  .orElseThrow()
                  .getPorts()
                  .add(
                      new ContainerPortBuilder()
                          .withName("metrics")
                          .withContainerPort(metrics.port())
                          .build());
              return pod;
            });
    RoleSpec triton = role("serve", Engine.TRTLLM, LABELS);
    triton.setMetricsPort(new IntOrString("metrics"));
    h.create(h.modelDeployment("triton", WINDOW, triton));

    PodCondition bound = awaitGate("triton-0", "False", "PoolUpperBoundOnly");
    assertThat(bound.getMessage())
        .startsWith("KV figure 399296 tokens is only an upper bound of the GPU pool")
        .contains("declare blockCountIsPool: true");
    assertThat(metrics.hits("/metrics")).isPositive();
    assertThat(inference.hits("/metrics")).isZero();
    // The pod's gate is written before the policy's status: the status may follow a moment later.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              PodVerdictStatus recorded = h.status("triton").pods.get(0);
              assertThat(recorded.poolTokens).isEqualTo(399_296L);
              assertThat(recorded.poolSource).isEqualTo("UPPER_BOUND");
            });
    assertThat(h.status("triton").roles.get(0).smallestPoolTokens).isNull();

    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("triton")
        .edit(
            md -> {
              md.getSpec().getRoles().get(0).setBlockCountIsPool(true);
              return md;
            });
    PodCondition verified = awaitGate("triton-0", "True", "PoolSufficient");
    assertThat(verified.getMessage())
        .contains("taken as its GPU pool on the role's declaration blockCountIsPool");
    assertThat(h.labelled("triton-0")).isTrue();
  }

  @Test
  void aMetricsPortNameTheEngineContainerDoesNotDeclareKeepsThePodShutNamingIt() {
    h.pod("triton-1", LABELS, h.engine(EngineShapes.tritonTrtllm(6239, 64)));
    RoleSpec triton = role("serve", Engine.TRTLLM, LABELS);
    triton.setMetricsPort(new IntOrString("metrics"));
    h.create(h.modelDeployment("triton", WINDOW, triton));
    PodCondition shut = awaitGate("triton-1", "False", "ProbeFailed");
    assertThat(shut.getMessage())
        .isEqualTo(
            "engine container "
                + SimulatedPods.ENGINE_CONTAINER
                + " declares no port named metrics (the role's metricsPort)");
  }
}

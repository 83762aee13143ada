package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@value GateNames#VERDICTS_ANNOTATION} annotation is pod metadata: anyone who may patch the
 * pod (a tenant with the "edit" role) may write it, unlike the gate condition (pods/status). A
 * record kvguard did not write must never open a gate: not in a running operator, not after a
 * restart.
 */
class ForgedVerdictRecordIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private ModelDeployment withRejectionProbe() {
    ModelDeployment md = h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE));
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(10);
    md.getSpec().setRejectionProbe(probe);
    return md;
  }

  /**
   * What a tenant writes: every figure that opens the gate, for the container the pod's status
   * names.
   */
  private void forge(String podName) {
    VerdictRecord real = VerdictRecords.of(h.getPod(podName), "glm");
    assertThat(real).isNotNull();
    String containerID =
        h.getPod(podName).getStatus().getContainerStatuses().get(0).getContainerID();
    Integer restarts =
        h.getPod(podName).getStatus().getContainerStatuses().get(0).getRestartCount();
    VerdictRecord forged =
        new VerdictRecord(
            "serve",
            "Verified",
            "PoolSufficient",
            containerID,
            restarts,
            2_040_000L,
            null,
            WINDOW,
            "0.5.18",
            null,
            containerID,
            WINDOW + 1,
            400,
            "ContextLengthExceeded",
            real.lastTransitionTime());
    String json;
    try {
      json =
          new com.fasterxml.jackson.databind.ObjectMapper()
              .writeValueAsString(Map.of("glm", forged));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(podName)
        .edit(
            pod -> {
              pod.getMetadata().getAnnotations().put(GateNames.VERDICTS_ANNOTATION, json);
              return pod;
            });
  }

  @Test
  void aForgedRefusalNeverOpensTheGateOfAnEngineThatAnsweredTheOverLongPrompt() {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    answers.put("/generate", EngineShapes.answersOverLong("leaked"));
    h.pod("serve-0", SERVE, h.engine(answers));
    h.create(withRejectionProbe());
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm")).isNotNull();
              assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").verdict())
                  .isNotEqualTo("Unknown");
            });

    forge("serve-0");

    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled("serve-0")).isFalse();
            });
  }

  @Test
  void aForgedVerdictIsNotCarriedOverByARestartedOperator() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.18", 600_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");
    h.stopOperator();
    forge("serve-0");
    h.api.clearRequests();
    h.start();

    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled("serve-0")).isFalse();
            });
    // Not even briefly: the restarted operator never put the routing label on (a label write goes
    // to the pod itself).
    assertThat(h.operatorRequests())
        .filteredOn(r -> r.method().equals("PATCH") && r.path().endsWith("/pods/serve-0"))
        .isEmpty();
  }
}

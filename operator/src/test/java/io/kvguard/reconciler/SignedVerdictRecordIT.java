package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Secret;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
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
 * A verdict record is trusted only with the operator's signature over it, this pod's UID and the
 * policy's name. The pods/status condition alone does not make a record kvguard's: on a pod whose
 * gate is already open, a tenant's record naming a refusal the engine never gave must not stand in
 * for the rejection probe a policy newly asks for, unsigned, signed wrongly, or signed for another
 * pod.
 */
class SignedVerdictRecordIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final long POOL = 2_040_000;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Map<String, FakeEngine.Answer> answeringOverLongPrompts() {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", POOL));
    answers.put("/generate", EngineShapes.answersOverLong("leaked"));
    return answers;
  }

  private static void enableRejectionProbe(io.kvguard.customresource.ModelDeploymentSpec spec) {
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(10);
    spec.setRejectionProbe(probe);
  }

  /**
   * A record with every figure that would open the gate, and a refusal of the over-limit prompt.
   */
  private static VerdictRecord refusalFor(
      ContainerStatus container, String lastTransitionTime, String sig) {
    return new VerdictRecord(
        "serve",
        "Verified",
        "PoolSufficient",
        container.getContainerID(),
        container.getRestartCount(),
        POOL,
        null,
        WINDOW,
        "0.5.18",
        null,
        container.getContainerID(),
        WINDOW + 1,
        400,
        "ContextLengthExceeded",
        lastTransitionTime,
        sig);
  }

  private void writeRecord(String podName, VerdictRecord record) {
    String json;
    try {
      json = JSON.writeValueAsString(Map.of("glm", record));
    } catch (JsonProcessingException e) {
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

  /**
   * The status as for a pod past the 50th: not listed, so only the pod's own record could carry
   * anything over.
   */
  private void statusListsNoPod() {
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .editStatus(
            md -> {
              md.setStatus(new ModelDeploymentStatus());
              return md;
            });
  }

  private void awaitOpen(String podName) {
    awaitGate(podName, "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled(podName)).isTrue());
  }

  /** The rejection probe was sent, the engine answered it, and the gate went (and stays) shut. */
  private void awaitProbedAndShut(FakeEngine engine, String podName) {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(engine.hits("/generate")).isPositive());
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              assertThat(h.gate(podName))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled(podName)).isFalse();
            });
  }

  private void forgedRefusalOnAnOpenGate(boolean withAnotherRecordsSignature) {
    FakeEngine engine = h.engine(answeringOverLongPrompts());
    h.pod("serve-0", SERVE, engine);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitOpen("serve-0");
    VerdictRecord real = VerdictRecords.of(h.getPod("serve-0"), "glm");
    assertThat(real.sig()).as("kvguard signs the records it writes").isNotBlank();

    h.stopOperator();
    ContainerStatus container = h.getPod("serve-0").getStatus().getContainerStatuses().get(0);
    writeRecord(
        "serve-0",
        refusalFor(
            container, real.lastTransitionTime(), withAnotherRecordsSignature ? real.sig() : null));
    statusListsNoPod();
    h.editSpec("glm", SignedVerdictRecordIT::enableRejectionProbe);
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
    h.start();

    awaitProbedAndShut(engine, "serve-0");
  }

  @Test
  void anUnsignedRefusalOnAnOpenGateDoesNotStandInForTheRejectionProbe() {
    forgedRefusalOnAnOpenGate(false);
  }

  @Test
  void aRefusalUnderAnotherRecordsSignatureDoesNotStandInForTheRejectionProbe() {
    forgedRefusalOnAnOpenGate(true);
  }

  @Test
  void aSignedRecordCopiedFromAnotherPodIsNotTrusted() {
    Map<String, FakeEngine.Answer> refusing =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", POOL));
    refusing.put("/generate", EngineShapes.refusesOverLong(WINDOW + 1, WINDOW));
    // SGLang v0.5.18 refusing both admission paths (issue 26): S1 at C, S4 at C − 6.
    FakeEngine honest =
        h.engine(refusing)
            .answerBy(
                "/generate",
                EngineShapes.sglangGenerate(
                    WINDOW, WINDOW - 6, n -> EngineShapes.refusesBand(n, WINDOW - 6)));
    FakeEngine leaky = h.engine(answeringOverLongPrompts());
    h.pod("serve-0", SERVE, honest);
    h.pod("serve-1", SERVE, leaky);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    h.editSpec("glm", SignedVerdictRecordIT::enableRejectionProbe);
    awaitOpen("serve-0");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(leaky.hits("/generate")).isPositive();
              assertThat(h.gate("serve-1"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
            });
    VerdictRecord signed = VerdictRecords.of(h.getPod("serve-0"), "glm");
    assertThat(signed.rejectionRefusedBy()).isNotNull();
    assertThat(signed.sig()).isNotBlank();

    h.stopOperator();
    // serve-1 made to look like serve-0 in every way a record is checked against (its container, an
    // open condition), and given serve-0's signed record: only the pod's UID differs.
    ContainerStatus source = h.getPod("serve-0").getStatus().getContainerStatuses().get(0);
    PodCondition open = h.gate("serve-0").orElseThrow();
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-1")
        .editStatus(
            pod -> {
              ContainerStatus target = pod.getStatus().getContainerStatuses().get(0);
              target.setContainerID(source.getContainerID());
              target.setRestartCount(source.getRestartCount());
              pod.getStatus()
                  .getConditions()
                  .removeIf(c -> GateNames.CONDITION_TYPE.equals(c.getType()));
              pod.getStatus().getConditions().add(open);
              return pod;
            });
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-1")
        .edit(
            pod -> {
              pod.getMetadata()
                  .getAnnotations()
                  .put(
                      GateNames.VERDICTS_ANNOTATION,
                      h.getPod("serve-0")
                          .getMetadata()
                          .getAnnotations()
                          .get(GateNames.VERDICTS_ANNOTATION));
              return pod;
            });
    statusListsNoPod();
    long before = leaky.hits("/generate");
    h.start();

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(leaky.hits("/generate")).isGreaterThan(before));
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-1"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False")));
  }

  @Test
  void theKeyIsCreatedOnceInTheOperatorsNamespaceAndARestartSignsWithTheSameOne() {
    h.pod("serve-0", SERVE, h.engine(answeringOverLongPrompts()));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitOpen("serve-0");
    Secret key =
        h.client
            .secrets()
            .inNamespace(OperatorHarness.OPERATOR_NAMESPACE)
            .withName(KvguardConfig.DEFAULT_VERDICT_KEY_SECRET)
            .get();
    assertThat(key).isNotNull();
    assertThat(java.util.Base64.getDecoder().decode(key.getData().get("key"))).hasSize(32);
    String sig = VerdictRecords.of(h.getPod("serve-0"), "glm").sig();

    h.stopOperator();
    h.start();
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").sig()).isEqualTo(sig);
            });
    assertThat(
            h.client
                .secrets()
                .inNamespace(OperatorHarness.OPERATOR_NAMESPACE)
                .withName(KvguardConfig.DEFAULT_VERDICT_KEY_SECRET)
                .get()
                .getData())
        .isEqualTo(key.getData());
  }
}

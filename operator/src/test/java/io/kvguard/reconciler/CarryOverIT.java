package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a restarted operator needs of each pod is on the pod, not in the ModelDeployment's status,
 * which lists at most 50 pods: a status that lists none (as for every pod past the 50th) still
 * carries every verdict over without a gate flip, and still hands back a pod that left the policy
 * while the operator was down.
 */
class CarryOverIT extends EmbeddedClusterTest {
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
   * SGLang v0.5.18 refusing both its paths: S1 at the context length, S4 at max_req_input_len =
   * WINDOW − 6 (issue 26).
   */
  private static final java.util.function.Function<byte[], FakeEngine.Answer> REFUSES_BOTH_PATHS =
      EngineShapes.sglangGenerate(WINDOW, WINDOW - 6, n -> EngineShapes.refusesBand(n, WINDOW - 6));

  private static Map<String, FakeEngine.Answer> sglang(long pool) {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", pool));
    answers.put("/generate", EngineShapes.refusesOverLong(WINDOW + 1, WINDOW));
    return answers;
  }

  /**
   * The status as a status of thousands of pods shows these: not listed (the operator is down
   * meanwhile).
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
    assertThat(h.status("glm").pods).isEmpty();
  }

  @Test
  void aRestartedOperatorCarriesEveryVerdictOverFromThePodsWhenTheStatusListsNone() {
    FakeEngine big = h.engine(sglang(2_040_000)).answerBy("/generate", REFUSES_BOTH_PATHS);
    FakeEngine small = h.engine(sglang(600_000)).answerBy("/generate", REFUSES_BOTH_PATHS);
    h.pod("serve-0", SERVE, big);
    h.pod("serve-1", SERVE, small);
    h.create(withRejectionProbe());
    awaitGate("serve-0", "True", "PoolSufficient");
    awaitGate("serve-1", "False", "PoolTooSmall");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());
    // The pod carries the figures and the refusal its verdict rests on, written with the condition.
    VerdictRecord record = VerdictRecords.of(h.getPod("serve-0"), "glm");
    assertThat(record).isNotNull();
    assertThat(record.verdict()).isEqualTo("Verified");
    assertThat(record.poolTokens()).isEqualTo(2_040_000L);
    assertThat(record.rejectionPromptTokens()).isEqualTo(1_048_577L);
    assertThat(record.containerID()).isEqualTo(record.rejectionRefusedBy()).isNotNull();
    // Signed with the operator's key: the restarted operator trusts it, a tenant cannot write one.
    assertThat(record.sig()).isNotBlank();
    assertThat(h.getPod("serve-0").getMetadata().getAnnotations())
        .containsKey(GateNames.VERDICTS_ANNOTATION);
    assertThat(big.hits("/generate")).isEqualTo(2);

    h.stopOperator();
    statusListsNoPod();
    h.api.clearRequests();
    long bigProbes = big.hits("/server_info");
    long smallProbes = small.hits("/server_info");
    h.start();

    // The new leader acted once it re-probed both engines; until then, and after, no gate moved.
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(big.hits("/server_info")).isGreaterThan(bigProbes);
              assertThat(small.hits("/server_info")).isGreaterThan(smallProbes);
              assertThat(h.status("glm").verified).isEqualTo("1/2");
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
        h.operatorRequests().stream()
            .filter(r -> r.method().equals("PATCH") && r.path().contains("/pods/"))
            .toList();
    assertThat(podWrites).isEmpty();
    // The refusal recorded on the pod still counts for the same container: the prompt is not sent
    // again.
    assertThat(big.hits("/generate")).isEqualTo(2);
    assertThat(h.status("glm").pods)
        .filteredOn(p -> p.name.equals("serve-0"))
        .singleElement()
        .satisfies(p -> assertThat(p.rejectionRefusedBy).isEqualTo(record.containerID()));
  }

  @Test
  void aRecordedRefusalThisEnginesRecogniserDoesNotCountIsSentAgainAfterARestart() {
    FakeEngine big = h.engine(sglang(2_040_000)).answerBy("/generate", REFUSES_BOTH_PATHS);
    h.pod("serve-0", SERVE, big);
    h.create(withRejectionProbe());
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").rejectionRefusedBy())
                    .isNotNull());
    h.stopOperator();
    // As an older kvguard recorded a 413 from an HTTP layer: same container, same prompt, no
    // engine's refusal.
    VerdictRecord recorded = VerdictRecords.of(h.getPod("serve-0"), "glm");
    VerdictRecord stale =
        new VerdictRecord(
            recorded.role(),
            recorded.verdict(),
            recorded.reason(),
            recorded.containerID(),
            recorded.restartCount(),
            recorded.poolTokens(),
            recorded.poolSource(),
            recorded.engineContextTokens(),
            recorded.engineVersion(),
            recorded.disaggregationMode(),
            recorded.rejectionRefusedBy(),
            recorded.rejectionPromptTokens(),
            413,
            "length limit exceeded",
            recorded.lastTransitionTime());
    // Signed with the operator's own key, as kvguard would have written it: only the recogniser
    // refuses it.
    VerdictRecord signedStale = signedWithTheOperatorsKey(h.getPod("serve-0"), stale);
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            pod -> {
              pod.getMetadata()
                  .getAnnotations()
                  .put(
                      GateNames.VERDICTS_ANNOTATION,
                      new com.fasterxml.jackson.databind.ObjectMapper()
                          .valueToTree(Map.of("glm", signedStale))
                          .toString());
              return pod;
            });
    assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").rejectionRefusalStatus())
        .isEqualTo(413);
    h.start();

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(big.hits("/generate")).isEqualTo(4));
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").rejectionRefusalStatus())
                    .isEqualTo(400));
  }

  private VerdictRecord signedWithTheOperatorsKey(
      io.fabric8.kubernetes.api.model.Pod pod, VerdictRecord record) {
    io.fabric8.kubernetes.api.model.Secret key =
        h.client
            .secrets()
            .inNamespace(OperatorHarness.OPERATOR_NAMESPACE)
            .withName(io.kvguard.KvguardConfig.DEFAULT_VERDICT_KEY_SECRET)
            .get();
    return io.kvguard.gate.RecordSigner.withKey(
            java.util.Base64.getDecoder().decode(key.getData().get("key")))
        .sign(pod, "glm", record);
  }

  @Test
  void aPodThatLeftThePolicyWhileTheOperatorWasDownIsLetGoShutOnItsRecordAlone() {
    h.pod("serve-0", SERVE, h.engine(sglang(2_040_000)).answerBy("/generate", REFUSES_BOTH_PATHS));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());

    h.stopOperator();
    // Relabelled out of the policy, and not listed in its status.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            pod -> {
              pod.getMetadata().getLabels().put("role", "batch");
              return pod;
            });
    statusListsNoPod();
    h.start();

    // Let go shut (the policy still exists; issue 29): the routing label gone, and the policy's
    // record gone with it.
    awaitGate("serve-0", "False", "NoLongerSelected");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.labelled("serve-0")).isFalse();
              assertThat(VerdictRecords.of(h.getPod("serve-0"))).isEmpty();
              assertThat(h.status("glm").verified).isEqualTo("0/0");
            });
  }
}

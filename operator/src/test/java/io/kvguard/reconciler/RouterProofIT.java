package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RejectionRouterSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.SimulatedPods;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * spec.rejectionProbe.router (issue 26 §2): a prefill/decode SGLang model is proven through the
 * router in front of its roles, the only way a prompt reaches the path that failed in the incident.
 * The prefill and decode pods refuse any prompt sent to them without bootstrap fields, as SGLang
 * does; the router is a fake engine on loopback that answers as SGLang's two checks do behind it.
 */
class RouterProofIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final long POOL = 2_040_000;

  /** max_req_input_len of every pod: min(C − 1, P − 1) − 5. */
  private static final long M = WINDOW - 6;

  private static final String LEAK = "CUSTOMER-B invoice 4471 for ACME Corp, card ending 0099";
  private static final Map<String, String> PREFILL = Map.of("app", "glm", "role", "prefill");
  private static final Map<String, String> DECODE = Map.of("app", "glm", "role", "decode");
  private static final List<String> PODS = List.of("prefill-0", "prefill-1", "decode-0");

  /** Behind the router, prefill's scheduler refuses the band prompt (a build with the fix). */
  private static final Function<byte[], FakeEngine.Answer> REFUSES_BOTH =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.refusesBand(n, M));

  /** The incident: the band prompt's abort is lost on transfer, and decode answers 200. */
  private static final Function<byte[], FakeEngine.Answer> ANSWERS_BAND =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.answersOverLong(LEAK));

  private FakeEngine router;
  private final Map<String, FakeEngine> engines = new HashMap<>();

  private void fleet(String version, Function<byte[], FakeEngine.Answer> routerAnswers) {
    for (String pod : PODS) {
      String mode = pod.startsWith("prefill") ? "prefill" : "decode";
      Map<String, FakeEngine.Answer> answers =
          new HashMap<>(EngineShapes.sglang(WINDOW, mode, version, POOL));
      answers.put(
          "/generate", EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http"));
      FakeEngine engine = h.engine(answers);
      engines.put(pod, engine);
      h.pod(pod, mode.equals("prefill") ? PREFILL : DECODE, engine);
    }
    router = h.engine(Map.of()).answerBy("/generate", routerAnswers);
    h.routerService("glm-router", router.port());
    ModelDeployment md =
        h.modelDeployment(
            "glm",
            WINDOW,
            role("prefill", Engine.SGLANG, PREFILL),
            role("decode", Engine.SGLANG, DECODE));
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(10);
    RejectionRouterSpec spec = new RejectionRouterSpec();
    spec.setService("glm-router");
    spec.setPort(router.port());
    probe.setRouter(spec);
    md.getSpec().setRejectionProbe(probe);
    h.create(md);
  }

  private void awaitEveryGate(String status, String reason) {
    PODS.forEach(pod -> awaitGate(pod, status, reason));
  }

  @Test
  void aRouterAnsweringABandPromptKeepsEveryPrefillAndDecodePodShut() {
    fleet("0.5.22", ANSWERS_BAND);

    awaitEveryGate("False", "RejectionPathUnsafe");
    for (String pod : PODS) {
      assertThat(h.gate(pod).orElseThrow().getMessage())
          .startsWith(
              "through router Service glm-router port "
                  + router.port()
                  + " (spec.rejectionProbe.router), for every prefill and decode pod of this"
                  + " ModelDeployment: rejection probe: a 1048570-token prompt, sized to reach the"
                  + " engine's S4 scheduler validate_input_length (max_req_input_len) through the"
                  + " router (1 of 2), was answered with HTTP 200")
          .doesNotContain(LEAK);
    }
    await()
        .untilAsserted(
            () -> {
              var proof = h.status("glm").routerProof;
              assertThat(proof.result).isEqualTo("RejectionPathUnsafe");
              assertThat(proof.message).contains("glm-router").doesNotContain(LEAK);
            });
    // S1 refused, then the first band prompt answered: the probe stops there.
    assertThat(router.hits("/generate")).isEqualTo(2);
    engines.values().forEach(e -> assertThat(e.hits("/generate")).isZero());
  }

  @Test
  void aRouterRefusingBothPathsWithSglangsOwnSentencesOpensThePodsAt0522() {
    fleet("0.5.22", REFUSES_BOTH);

    awaitEveryGate("True", "PoolSufficient");
    assertThat(h.gate("decode-0").orElseThrow().getMessage())
        .contains(
            "one prompt per admission path was refused, each by its own check (S1 tokenizer"
                + " context-length check through the router refused 1048576 tokens with HTTP 400")
        .contains("(2 of 2) refused 1048570 tokens with HTTP 400 as validate_input_length")
        .contains("through router Service glm-router port " + router.port())
        .contains("for 3 pods (proof ");
    await()
        .untilAsserted(
            () -> {
              var proof = h.status("glm").routerProof;
              assertThat(proof.result).isEqualTo("Passed");
              assertThat(proof.key).hasSize(16);
              assertThat(proof.time).isNotNull();
            });
    // S1 once, the band prompt once per prefill pod; nothing sent to the pods themselves.
    assertThat(router.hits("/generate")).isEqualTo(3);
    engines.values().forEach(e -> assertThat(e.hits("/generate")).isZero());
  }

  /**
   * Behind the router the refusing scheduler states a limit that no prefill or decode pod reported
   * (a decode worker whose real max_req_input_len is below the band prompt refusing it for the
   * prefill worker, or a /server_info that is not the scheduler's): the refusal is not the one the
   * prompt was sized for, so nothing opens.
   */
  @Test
  void aBandRefusalStatingALimitNoPodReportedOpensNothing() {
    fleet(
        "0.5.22",
        EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.refusesBand(n, M - 1000)));

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-0").orElseThrow().getMessage())
        .contains("states a limit of " + (M - 1000) + " tokens")
        .contains("none of the max_req_input_len values the pods behind the route reported");
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").routerProof.result)
                    .isEqualTo("RejectionProbeInconclusive"));
  }

  @Test
  void belowTheClaimedFixedReleaseAPassingRouterOpensNothing() {
    fleet("0.5.21", REFUSES_BOTH);

    awaitEveryGate("False", "KnownUnsafeEngine");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              PODS.forEach(
                  pod ->
                      assertThat(h.gate(pod).orElseThrow().getReason())
                          .isEqualTo("KnownUnsafeEngine"));
              assertThat(router.totalHits()).isZero();
            });
  }

  @Test
  void aNewImageOnOnePodProvesAgainAndAFailedReproofShutsEveryPod() {
    fleet("0.5.22", REFUSES_BOTH);
    awaitEveryGate("True", "PoolSufficient");
    await().untilAsserted(() -> assertThat(h.status("glm").routerProof.result).isEqualTo("Passed"));
    String proven = h.status("glm").routerProof.key;
    long sent = router.hits("/generate");

    // The router's prefill workers now lose the band prompt's abort; prefill-1 gets a new image.
    router.answerBy("/generate", ANSWERS_BAND);
    newImage("prefill-1", "sha256:0bad");

    // The proof for the old pods does not stand for the new set: proved again, it fails, and every
    // prefill and decode pod is shut, those whose image did not change included.
    awaitEveryGate("False", "RejectionPathUnsafe");
    assertThat(router.hits("/generate")).isGreaterThan(sent);
    await()
        .untilAsserted(
            () -> {
              var proof = h.status("glm").routerProof;
              assertThat(proof.key).isNotEqualTo(proven);
              assertThat(proof.result).isEqualTo("RejectionPathUnsafe");
            });
  }

  /**
   * The kubelet ran a new image in the pod's engine container: a new container and image ID. The
   * operator writes the pod's status too; a write that met its write (409) is made again.
   */
  private void newImage(String pod, String imageID) {
    await()
        .ignoreExceptionsInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class)
        .untilAsserted(() -> replaceImage(pod, imageID));
  }

  private void replaceImage(String pod, String imageID) {
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(pod)
        .editStatus(
            p ->
                new PodBuilder(p)
                    .editStatus()
                    .withContainerStatuses(
                        p.getStatus().getContainerStatuses().stream()
                            .map(
                                s ->
                                    s.getName().equals(SimulatedPods.ENGINE_CONTAINER)
                                        ? new ContainerStatusBuilder(s)
                                            .withImageID(imageID)
                                            .withContainerID("containerd://new-" + pod)
                                            .build()
                                        : s)
                            .toList())
                    .endStatus()
                    .build());
  }
}

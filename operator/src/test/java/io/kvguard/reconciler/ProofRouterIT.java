package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RejectionRouterSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeProofRouter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * spec.rejectionProbe.router.registerWorkers (issue 26 §2): the prefill and decode pods are proven
 * through a dedicated proof router they are added to for the proof, while their readiness gates
 * keep them out of the production router. The router is {@link FakeProofRouter} (sgl-model-gateway
 * v0.5.18's worker API and PD routing); behind it fake SGLang prefill and decode engines that
 * refuse any prompt without the router's bootstrap fields, as SGLang does, and answer a routed one
 * as SGLang's checks do.
 */
class ProofRouterIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final long POOL = 2_040_000;

  /** max_req_input_len of every pod: min(C − 1, P − 1) − 5. */
  private static final long M = WINDOW - 6;

  private static final String LEAK = "CUSTOMER-B invoice 4471 for ACME Corp, card ending 0099";
  private static final Map<String, String> PREFILL = Map.of("app", "glm", "role", "prefill");
  private static final Map<String, String> DECODE = Map.of("app", "glm", "role", "decode");
  private static final List<String> PODS = List.of("prefill-0", "prefill-1", "decode-0");
  private static final String SERVICE = "glm-proof-router";

  /** The engines' token (probe.authSecretRef), also the proof router's --api-key. */
  private static final String TOKEN = "engine-bearer-51c7e0a2";

  @org.junit.jupiter.api.BeforeEach
  void allowTheEngineTokenInTheChart() {
    h.rbacValues("probeCredentials: {enabled: true, secretNames: [engine-token]}");
  }

  /** A build with the fix: prefill's scheduler refuses the band prompt. */
  private static final Function<byte[], FakeEngine.Answer> REFUSES_BOTH =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.refusesBand(n, M));

  /** The incident: the band prompt's abort is lost on transfer, and decode answers 200. */
  private static final Function<byte[], FakeEngine.Answer> ANSWERS_BAND =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.answersOverLong(LEAK));

  private final FakeProofRouter router = newRouter();
  private final Map<String, FakeEngine> engines = new HashMap<>();

  /** Whether fleet creates the router's Service when the test made none. */
  private boolean makeService = true;

  private static FakeProofRouter newRouter() {
    try {
      return new FakeProofRouter().withApiKey(TOKEN);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void closeRouter() {
    router.close();
  }

  private void fleet(Function<byte[], FakeEngine.Answer> routed, Boolean registerWorkers) {
    fleet(routed, routed, registerWorkers);
  }

  /**
   * The pods behind the router, the ModelDeployment, and (unless the test made its own) the
   * router's Service as the proof wants it: ClusterIP with a selector.
   */
  private void fleet(
      Function<byte[], FakeEngine.Answer> prefillRouted,
      Function<byte[], FakeEngine.Answer> decodeRouted,
      Boolean registerWorkers) {
    if (makeService
        && h.client.services().inNamespace(OperatorHarness.NAMESPACE).withName(SERVICE).get()
            == null) {
      h.routerService(SERVICE, router.port());
    }
    FakeEngine.Answer noBootstrap =
        EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http");
    for (String pod : PODS) {
      String mode = pod.startsWith("prefill") ? "prefill" : "decode";
      Function<byte[], FakeEngine.Answer> routed =
          mode.equals("prefill") ? prefillRouted : decodeRouted;
      FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, mode, "0.5.22", POOL));
      engine.answerBy("/generate", body -> bootstrapped(body) ? routed.apply(body) : noBootstrap);
      engines.put(pod, engine);
      h.pod(pod, mode.equals("prefill") ? PREFILL : DECODE, engine);
    }
    ModelDeployment md =
        h.modelDeployment(
            "glm",
            WINDOW,
            role("prefill", Engine.SGLANG, PREFILL),
            role("decode", Engine.SGLANG, DECODE));
    h.client
        .secrets()
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName("engine-token")
                .endMetadata()
                .addToStringData("token", TOKEN)
                .build())
        .create();
    io.kvguard.customresource.SecretKeyRef token = new io.kvguard.customresource.SecretKeyRef();
    token.setName("engine-token");
    io.kvguard.customresource.ProbeSpec probeSpec = new io.kvguard.customresource.ProbeSpec();
    probeSpec.setAuthSecretRef(token);
    md.getSpec().setProbe(probeSpec);
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(10);
    RejectionRouterSpec spec = new RejectionRouterSpec();
    spec.setService(SERVICE);
    spec.setPort(router.port());
    spec.setRegisterWorkers(registerWorkers);
    probe.setRouter(spec);
    md.getSpec().setRejectionProbe(probe);
    h.create(md);
  }

  /** Whether the router added its bootstrap fields (it puts them first). */
  private static boolean bootstrapped(byte[] body) {
    String head = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8);
    return head.contains("\"bootstrap_room\":");
  }

  private void awaitEveryGate(String status, String reason) {
    PODS.forEach(pod -> awaitGate(pod, status, reason));
  }

  private long promptsReachingEngines() {
    return engines.values().stream().mapToLong(e -> e.hits("/generate")).sum();
  }

  @Test
  void registeredPodsOpenOnlyAfterARefusingRouteAndAreRemovedAfterwards() {
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("True", "PoolSufficient");
    assertThat(h.gate("decode-0").orElseThrow().getMessage())
        .contains("(2 of 2) refused 1048570 tokens with HTTP 400 as validate_input_length")
        .contains("through router Service glm-proof-router port " + router.port());
    await().untilAsserted(() -> assertThat(h.status("glm").routerProof.result).isEqualTo("Passed"));
    // Every pod was on the router when the first prompt came, and none is left after the proof.
    assertThat(router.workersAtFirstGenerate()).isEqualTo(3);
    assertThat(router.added()).isEqualTo(3);
    await().untilAsserted(() -> assertThat(router.workers()).isZero());
    assertThat(router.removed()).isEqualTo(3);
    // S1 and two band prompts, each reaching the engines with the router's bootstrap fields.
    assertThat(router.generated()).isEqualTo(3);
    assertThat(promptsReachingEngines()).isGreaterThanOrEqualTo(3);
  }

  @Test
  void aBandPromptAnsweredThroughTheProofRouterKeepsEveryPodShutAndRemovesTheWorkers() {
    fleet(ANSWERS_BAND, true);

    awaitEveryGate("False", "RejectionPathUnsafe");
    for (String pod : PODS) {
      assertThat(h.gate(pod).orElseThrow().getMessage())
          .contains("was answered with HTTP 200")
          .doesNotContain(LEAK);
    }
    await()
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").routerProof.result).isEqualTo("RejectionPathUnsafe");
              assertThat(router.workers()).isZero();
            });
    assertThat(router.removed()).isEqualTo(router.added()).isEqualTo(3);
  }

  @Test
  void aRefusedRegistrationIsInconclusiveAndLeavesNoWorker() {
    router.refuseRegistrations();
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-0").orElseThrow().getMessage())
        .contains("could not be added to the proof router")
        .contains("spec.rejectionProbe.router.registerWorkers")
        .contains("must reach the pod's /health and /server_info");
    await().untilAsserted(() -> assertThat(router.workers()).isZero());
    assertThat(router.generated()).isZero();
    assertThat(promptsReachingEngines()).isZero();
  }

  @Test
  void aWorkerKvguardDidNotAddMakesTheProofInconclusiveAndIsLeftAlone() {
    router.withWorker("http://10.9.9.9:30000", "prefill");
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("decode-0").orElseThrow().getMessage())
        .contains("kvguard did not add for this ModelDeployment [http://10.9.9.9:30000]");
    assertThat(router.workers()).isEqualTo(1);
    assertThat(router.added()).isZero();
    assertThat(router.generated()).isZero();
  }

  /**
   * Without registerWorkers, a router that sees none of the pods (a discovery router: the pods are
   * not Ready while their gates are shut) answers its own 503: that is not the engine's answer, so
   * the pods are inconclusive with the way out, not unsafe.
   */
  @Test
  void aDiscoveryRoutersNoAvailableServersIsInconclusiveAndNamesTheProofRouter() {
    fleet(REFUSES_BOTH, null);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-1").orElseThrow().getMessage())
        .contains("answered HTTP 503 server_selection_failed")
        .contains("adds a pod only once it is Ready")
        .contains("registerWorkers: true")
        .contains("The router must reach pods whose gates are shut");
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").routerProof.result)
                    .isEqualTo("RejectionProbeInconclusive"));
    assertThat(router.added()).isZero();
    assertThat(router.generated()).isEqualTo(1);
  }

  /**
   * An ExternalName Service is a DNS alias to wherever its creator points it (kubernetes/api
   * v0.36.3 core/v1/types.go:5793-5796): nothing is sent through it, not the prompts, not the
   * engines' token. Before kvguard read the Service, the proof went to whatever the name resolved
   * to (here the fake router, which would have passed it).
   */
  @Test
  void anExternalNameServiceIsRefusedAndTheRouterBehindItHearsNothing() {
    h.service(
        new ServiceBuilder()
            .withNewMetadata()
            .withName(SERVICE)
            .endMetadata()
            .withNewSpec()
            .withType("ExternalName")
            .withExternalName("proof-router.other-tenant.svc.cluster.local")
            .endSpec()
            .build());
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("decode-0").orElseThrow().getMessage())
        .contains("router Service glm-proof-router (spec.rejectionProbe.router.service) is of type")
        .contains("ExternalName (a DNS alias for proof-router.other-tenant.svc.cluster.local")
        .contains("nothing was sent")
        .contains("a Service of type ClusterIP");
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").routerProof.result)
                    .isEqualTo("RejectionProbeInconclusive"));
    assertThat(router.requests()).isZero();
  }

  /**
   * A Service without a selector gets the endpoints whoever writes its Endpoints or EndpointSlices
   * chooses (kubernetes/api v0.36.3 core/v1/types.go:5990-5994; the EndpointSlice controller's
   * syncService skips it): refused, naming its type.
   */
  @Test
  void aServiceWithoutASelectorIsRefusedNamingItsType() {
    h.service(
        new ServiceBuilder()
            .withNewMetadata()
            .withName(SERVICE)
            .endMetadata()
            .withNewSpec()
            .withType("ClusterIP")
            .addNewPort()
            .withPort(router.port())
            .endPort()
            .endSpec()
            .build());
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-0").orElseThrow().getMessage())
        .contains("is of type ClusterIP without a selector")
        .contains("Endpoints or EndpointSlices");
    assertThat(router.requests()).isZero();
  }

  /** No Service of that name: nothing is sent, and the message says so. */
  @Test
  void aMissingServiceIsInconclusiveAndSaysSo() {
    makeService = false;
    fleet(REFUSES_BOTH, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-1").orElseThrow().getMessage())
        .contains("router Service glm-proof-router (spec.rejectionProbe.router.service) does not")
        .contains("exist in namespace " + OperatorHarness.NAMESPACE);
    assertThat(router.requests()).isZero();
  }

  /**
   * The incident's prefill admits the band prompt, and the decode worker refuses the router's
   * request with SGLang's 401: the router answers 500 decode_error. That is no engine's answer to
   * the prompt: every pod stays shut as inconclusive, naming authentication, not as unsafe.
   */
  @Test
  void aDecodeWorkers401ThroughTheRouterIsInconclusiveNotUnsafe() {
    FakeEngine.Answer unauthorized =
        new FakeEngine.Answer(
            401,
            "application/json",
            "{\"error\":\"Unauthorized\"}".getBytes(StandardCharsets.UTF_8),
            0);
    fleet(ANSWERS_BAND, body -> unauthorized, true);

    awaitEveryGate("False", "RejectionProbeInconclusive");
    assertThat(h.gate("decode-0").orElseThrow().getMessage())
        .contains("answered HTTP 500 decode_error")
        .contains("authentication refusal");
    await()
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").routerProof.result)
                  .isEqualTo("RejectionProbeInconclusive");
              assertThat(router.workers()).isZero();
            });
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeProofRouter;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A whole proof through {@link FakeProofRouter} (sgl-model-gateway v0.5.18's worker API and PD
 * routing) to fake SGLang prefill and decode engines: the cap on the whole proof (issue 26 §2
 * follow-ups, 2), and a decode worker's refusal the router folds into its own 500 (3).
 */
class PdRouterProbeTest {
  private static final long WINDOW = 1_048_576;
  private static final long POOL = 2_040_000;

  /** max_req_input_len of every pod: min(C − 1, P − 1) − 5. */
  private static final long M = WINDOW - 6;

  private static final String TOKEN = "engine-bearer-51c7e0a2";

  private static final String LEAK = "CUSTOMER-B invoice 4471 for ACME Corp, card ending 0099";

  private static final Function<byte[], FakeEngine.Answer> REFUSES_BOTH =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.refusesBand(n, M));

  /** Prefill admits the band prompt (the incident's build): decode's answer is what comes back. */
  private static final Function<byte[], FakeEngine.Answer> ANSWERS_BAND =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.answersOverLong(LEAK));

  private final EngineHttp http = EngineHttp.createDefault();
  private final PdRouterProbe probe = new PdRouterProbe(http, new RejectionProbe(http));
  private final List<FakeEngine> engines = new ArrayList<>();
  private FakeProofRouter router;

  @AfterEach
  void close() {
    engines.forEach(FakeEngine::close);
    if (router != null) {
      router.close();
    }
  }

  private PdRouterProbe.Member pod(
      String name,
      String mode,
      Function<byte[], FakeEngine.Answer> generate,
      long serverInfoDelayMillis)
      throws Exception {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, mode, "0.5.22", POOL));
    answers.put("/server_info", answers.get("/server_info").delayedBy(serverInfoDelayMillis));
    FakeEngine engine = new FakeEngine().serve(answers).answerBy("/generate", generate);
    engines.add(engine);
    return new PdRouterProbe.Member(
        name,
        mode,
        EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(5)),
        new PoolObservation(POOL, OptionalLong.of(WINDOW), "0.5.22", mode, List.of()));
  }

  /** Through a proof router whose --api-key is the engines' token, which kvguard sends. */
  private RejectionOutcome prove(List<PdRouterProbe.Member> members, Duration timeout) {
    return prove(members, timeout, Optional.of(TOKEN));
  }

  /** With {@code token}: the engines' token, which kvguard sends to the router over plain HTTP. */
  private RejectionOutcome prove(
      List<PdRouterProbe.Member> members, Duration timeout, Optional<String> token) {
    EngineRejection sglang = EngineProbes.standard(http).forEngine(Engine.SGLANG).rejection().get();
    return probe.prove(
        sglang,
        members,
        EngineEndpoint.of("http", "127.0.0.1", router.port(), timeout).withBearerToken(token),
        "zai-org/GLM-5.3",
        WINDOW + 1,
        Optional.of("inference/glm"),
        RouterWorkers.Journal.NONE);
  }

  private RejectionOutcome proveWithDecode(Function<byte[], FakeEngine.Answer> decode)
      throws Exception {
    router = new FakeProofRouter().withApiKey(TOKEN);
    return prove(
        List.of(pod("prefill-0", "prefill", ANSWERS_BAND, 0), pod("decode-0", "decode", decode, 0)),
        Duration.ofSeconds(10));
  }

  /**
   * Each step keeps within its own timeout (each pod's /server_info in 1.5 s of its 5, the two
   * prompts in 1.4 s of the router's 2), but together they run past the cap of 2 × 2 s: the proof
   * fails (tried again a period later), and the workers it added are still removed.
   */
  @Test
  void aProofPastItsCapFailsAndTheWorkersAddedAreStillRemoved() throws Exception {
    router = new FakeProofRouter().withApiKey(TOKEN).holdGenerate(Duration.ofMillis(700));
    Duration timeout = Duration.ofSeconds(2);
    List<PdRouterProbe.Member> members =
        List.of(
            pod("prefill-0", "prefill", REFUSES_BOTH, 1_500),
            pod("decode-0", "decode", REFUSES_BOTH, 1_500));

    long start = System.nanoTime();
    RejectionOutcome outcome = prove(members, timeout);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(outcome).isInstanceOf(RejectionOutcome.Failed.class);
    assertThat(((RejectionOutcome.Failed) outcome).cause())
        .startsWith("the proof ran past its cap of 4 s (2 × spec.rejectionProbe.timeoutSeconds");
    assertThat(router.added()).isEqualTo(2);
    assertThat(router.workers()).isZero();
    assertThat(router.removed()).isEqualTo(2);
    // The cap, then at most one timeout for the removal.
    assertThat(took).isLessThan(PdRouterProbe.capOf(timeout).plus(timeout));
  }

  /**
   * SGLang answers a request without its --api-key with 401 {"error": "Unauthorized"}; a decode
   * worker's 401 reaches the client as the router's 500 decode_error. No engine answered the
   * prompt: inconclusive, naming authentication, not unsafe.
   */
  @Test
  void aDecodeWorkers401FoldedIntoTheRouters500IsInconclusiveAndNamesAuthentication()
      throws Exception {
    RejectionOutcome outcome =
        proveWithDecode(
            body ->
                new FakeEngine.Answer(
                    401,
                    "application/json",
                    "{\"error\":\"Unauthorized\"}".getBytes(StandardCharsets.UTF_8),
                    0));

    assertThat(outcome).isInstanceOf(RejectionOutcome.Inconclusive.class);
    assertThat(((RejectionOutcome.Inconclusive) outcome).cause())
        .contains("answered HTTP 500 decode_error")
        .contains("authentication refusal (SGLang's own \"Unauthorized\", HTTP 401/403)")
        .contains("api_key");
    assertThat(router.workers()).isZero();
  }

  /** A 413 from something in front of the decode worker (nginx's page here): request size. */
  @Test
  void aDecodeWorkers413FoldedIntoTheRouters500IsInconclusiveAndNamesTheRequestSize()
      throws Exception {
    String nginx =
        "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n"
            + "<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx</center>"
            + "\r\n</body>\r\n</html>\r\n";
    RejectionOutcome outcome =
        proveWithDecode(
            body ->
                new FakeEngine.Answer(413, "text/html", nginx.getBytes(StandardCharsets.UTF_8), 0));

    assertThat(outcome).isInstanceOf(RejectionOutcome.Inconclusive.class);
    assertThat(((RejectionOutcome.Inconclusive) outcome).cause())
        .contains("answered HTTP 500 decode_error")
        .contains("request-size refusal (HTTP 413")
        .containsPattern("the probe's request is about [0-9]+ bytes");
  }

  /** The decode engine's own 500 keeps its status through the router, and stays unsafe. */
  @Test
  void aDecodeWorkersOwn500IsStillUnsafe() throws Exception {
    RejectionOutcome outcome =
        proveWithDecode(
            body ->
                new FakeEngine.Answer(
                    500,
                    "application/json",
                    "{\"error\":{\"message\":\"KV transfer failed\"}}"
                        .getBytes(StandardCharsets.UTF_8),
                    0));

    assertThat(outcome).isInstanceOf(RejectionOutcome.Answered.class);
  }

  /** Another tenant's prefill engine, which refuses every prompt with SGLang's own sentences. */
  private FakeEngine tenantPrefill() throws Exception {
    FakeEngine tenant =
        new FakeEngine()
            .serve(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", POOL))
            .answerBy("/generate", REFUSES_BOTH);
    engines.add(tenant);
    return tenant;
  }

  /**
   * A hostile tenant who reaches a proof router started without --api-key adds a prefill worker of
   * its own once kvguard has listed the router's workers (sgl-model-gateway v0.5.18 applies no
   * authentication to its worker routes without one: {@code server.rs:632-655}, {@code
   * middleware.rs:114-144}). The router picks it for prompts and passes on kvguard's Authorization
   * header, the engines' token ({@code routers/http/pd_router.rs:1358-1378}, {@code
   * routers/header_utils.rs:207-219}), and its look-alike refusal stands for the pods' own, whose
   * prefill here answers the band prompt (the incident). Nothing may be added to or sent through a
   * router whose worker API answers without its key.
   */
  @Test
  void aProofRouterWhoseWorkerApiAnswersWithoutAKeyGetsNoPodsNoPromptsAndNoToken()
      throws Exception {
    FakeEngine tenant = tenantPrefill();
    router =
        new FakeProofRouter()
            .withTenantPrefillAddedAfterTheListing("http://127.0.0.1:" + tenant.port(), 8998);

    RejectionOutcome outcome =
        prove(
            List.of(
                pod("prefill-0", "prefill", ANSWERS_BAND, 0),
                pod("decode-0", "decode", REFUSES_BOTH, 0)),
            Duration.ofSeconds(10),
            Optional.of(TOKEN));

    assertThat(tenant.authorizations()).doesNotContain("Bearer " + TOKEN);
    assertThat(outcome).isInstanceOf(RejectionOutcome.Inconclusive.class);
    assertThat(((RejectionOutcome.Inconclusive) outcome).cause())
        .contains("GET /workers without a key answered HTTP 200")
        .contains("--api-key");
    assertThat(router.added()).isZero();
    assertThat(router.generated()).isZero();
  }

  /** With the engines' token as its --api-key, the tenant's worker is refused and hears nothing. */
  @Test
  void aProofRouterWithTheEnginesTokenAsItsApiKeyKeepsOtherTenantsWorkersOff() throws Exception {
    FakeEngine tenant = tenantPrefill();
    router =
        new FakeProofRouter()
            .withApiKey(TOKEN)
            .withTenantPrefillAddedAfterTheListing("http://127.0.0.1:" + tenant.port(), 8998);

    RejectionOutcome outcome =
        prove(
            List.of(
                pod("prefill-0", "prefill", REFUSES_BOTH, 0),
                pod("decode-0", "decode", REFUSES_BOTH, 0)),
            Duration.ofSeconds(10),
            Optional.of(TOKEN));

    assertThat(outcome).isInstanceOf(RejectionOutcome.Refused.class);
    assertThat(tenant.totalHits()).isZero();
    assertThat(router.workersAtFirstGenerate()).isEqualTo(2);
    assertThat(router.workers()).isZero();
  }

  /**
   * A proxy on the Service's port refuses requests without a token (403 here, an authorization
   * policy's) in front of a router started without --api-key, whose own pod port stays open to
   * other tenants. Only the router's own 401 shows its key is enforced: sgl-model-gateway v0.5.18
   * answers an unauthenticated worker route 401 ({@code middleware.rs:114-144}), or with
   * control-plane authentication 401 "Missing or invalid Authorization header" (lightseekorg/smg
   * 5ddd447ef {@code auth/src/middleware.rs:232-247}).
   */
  @Test
  void aProxysRefusalOfAnAnonymousListingDoesNotStandForTheRoutersKey() throws Exception {
    FakeEngine tenant = tenantPrefill();
    router =
        new FakeProofRouter()
            .behindAProxyAnsweringAnonymousRequests(403)
            .withTenantPrefillAddedAfterTheListing("http://127.0.0.1:" + tenant.port(), 8998);

    RejectionOutcome outcome =
        prove(
            List.of(
                pod("prefill-0", "prefill", ANSWERS_BAND, 0),
                pod("decode-0", "decode", REFUSES_BOTH, 0)),
            Duration.ofSeconds(10),
            Optional.of(TOKEN));

    assertThat(tenant.authorizations()).doesNotContain("Bearer " + TOKEN);
    assertThat(outcome).isInstanceOf(RejectionOutcome.Inconclusive.class);
    assertThat(((RejectionOutcome.Inconclusive) outcome).cause())
        .contains("GET /workers without a key answered HTTP 403")
        .contains("--api-key");
    assertThat(router.added()).isZero();
    assertThat(router.generated()).isZero();
  }
}

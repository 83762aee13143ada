package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Event;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** spec.rejectionProbe: the over-capacity prompt must be refused, never answered. */
class RejectionProbeIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;

  /** TgiRejection.MAX_TOTAL_TOKENS_CLASS (package-private in io.kvguard.probe). */
  /** TGI's record: T2 alone, its default input limit (X - 1) leaving T3 no band. */
  private static final String TGI_REFUSAL =
      "paths: T2 total check (N + max_new_tokens > max_total_tokens) refused 1048577 tokens with"
          + " HTTP 422 as validation: MaxTotalTokens, whole answer matched";

  private static final String LEAK = "CUSTOMER-B invoice 4471 for ACME Corp, card ending 0099";
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeEach
  void captureLogs() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    // "Written nowhere" must cover kvguard's DEBUG lines too (logback.xml pins io.kvguard at INFO).
    ((Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(ch.qos.logback.classic.Level.DEBUG);
    logs.start();
    root.addAppender(logs);
  }

  @AfterEach
  void releaseLogs() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    ((Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(ch.qos.logback.classic.Level.INFO);
  }

  private ModelDeployment withRejectionProbe(Engine engine, int timeoutSeconds) {
    return withRejectionProbe(WINDOW, role("serve", engine, SERVE), timeoutSeconds);
  }

  private ModelDeployment withRejectionProbe(
      long window, io.kvguard.customresource.RoleSpec role, int timeoutSeconds) {
    ModelDeployment md = h.modelDeployment("glm", window, role);
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(timeoutSeconds);
    md.getSpec().setRejectionProbe(probe);
    return md;
  }

  /**
   * SGLang v0.5.18 refusing both its paths: S1 at the context length, S4 at max_req_input_len =
   * WINDOW − 6 (issue 26).
   */
  private static final java.util.function.Function<byte[], FakeEngine.Answer> REFUSES_BOTH_PATHS =
      EngineShapes.sglangGenerate(WINDOW, WINDOW - 6, n -> EngineShapes.refusesBand(n, WINDOW - 6));

  private static Map<String, FakeEngine.Answer> sglang(long pool, FakeEngine.Answer generate) {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", pool));
    answers.put("/generate", generate);
    return answers;
  }

  @Test
  void anEngineThatRefusesTheOverLimitPromptIsVerified() throws Exception {
    FakeEngine engine =
        h.engine(sglang(2_040_000, EngineShapes.refusesOverLong(WINDOW + 1, WINDOW)))
            .answerBy("/generate", REFUSES_BOTH_PATHS);
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.SGLANG, 10));

    awaitGate("serve-0", "True", "PoolSufficient");
    // One prompt per admission path (issue 26): S1 at the context length, S4 at max_req_input_len.
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains(
            "one prompt per admission path was refused, each by its own check (S1 tokenizer"
                + " context-length check refused 1048576 tokens with HTTP 400 as context-length check;"
                + " S4 scheduler validate_input_length (max_req_input_len) refused 1048570 tokens");
    assertThat(engine.hits("/generate")).isEqualTo(2);
    // The last sent is the band prompt: 1,048,570 token IDs, one output token, no stream.
    JsonNode sent = JSON.readTree(engine.lastBody("/generate"));
    assertThat(tokenIds(sent.get("input_ids"))).isEqualTo(1_048_570);
    assertThat(sent.at("/sampling_params/max_new_tokens").asInt()).isEqualTo(1);
    assertThat(sent.get("stream").asBoolean(true)).isFalse();
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").pods.get(0))
                    .satisfies(
                        pod -> {
                          assertThat(pod.rejectionPromptTokens).isEqualTo(1_048_577L);
                          assertThat(pod.rejectionRefusalStatus).isEqualTo(400);
                          assertThat(pod.rejectionRefusalError)
                              .startsWith("paths: S1 tokenizer context-length check");
                        }));
  }

  private static Map<String, FakeEngine.Answer> tgi(FakeEngine.Answer generate) {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.tgi3(WINDOW, 2_040_000, "3.3.7"));
    answers.put("/generate", generate);
    return answers;
  }

  @Test
  void tgisBodyLimitIsNoRefusalAndKeepsTheGateShutNamingThePayloadLimit() {
    // TGI >= 2.4.1 behind its default --payload-limit: axum answers 413 "length limit exceeded"
    // before TGI validates.
    FakeEngine engine =
        h.engine(tgi(EngineFixtures.answer("tgi-3.3.7/generate-413-payload-limit.http")));
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.TGI, 10));

    awaitGate("serve-0", "False", "RejectionProbeInconclusive");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .startsWith(
            "rejection probe: a 1048577-token prompt proved nothing: POST /generate answered HTTP 413")
        .endsWith(
            "raise the engine's --payload-limit above 2097201 bytes (T2 total check (N +"
                + " max_new_tokens > max_total_tokens))");
    assertThat(engine.lastBody("/generate")).hasSize(2_097_201);
    await()
        .untilAsserted(
            () ->
                assertThat(h.events())
                    .extracting(Event::getReason)
                    .contains("RejectionProbeInconclusive"));
    await()
        .untilAsserted(
            () ->
                assertThat(h.registry.scrape())
                    .containsPattern(
                        "kvguard_rejection_probes_total\\{[^}]*result=\"inconclusive\"[^\\n]*\\} 1"));
    assertThat(h.status("glm").pods.get(0).rejectionRefusedBy).isNull();
  }

  @Test
  void aRefusalCarriedOverFromStatusKeepsTheStatusAndErrorClassTheEngineAnswered() {
    FakeEngine engine =
        h.engine(
            tgi(
                new FakeEngine.Answer(
                    422,
                    "application/json",
                    // tgi-3.3.7/generate-422-validation.http with this pod's max_total_tokens and
                    // the prompt sent: TGI's numbers are checked against both.
                    ("{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must"
                            + " be <= 1048576. Given: 1048577 `inputs` tokens and 1 `max_new_tokens`\","
                            + "\"error_type\":\"validation\"}")
                        .getBytes(),
                    0)));
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.TGI, 10));
    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains(
            "one prompt per admission path was refused, each by its own check ("
                + TGI_REFUSAL.substring("paths: ".length())
                + ")");
    await()
        .untilAsserted(
            () -> assertThat(h.status("glm").pods.get(0).rejectionRefusalStatus).isEqualTo(422));

    h.stopOperator();
    long infoProbes = engine.hits("/info");
    h.start();
    // The new leader re-reads the pool and carries the recorded refusal over instead of sending the
    // prompt again.
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(engine.hits("/info")).isGreaterThan(infoProbes));
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0").orElseThrow().getMessage())
                  .contains(
                      "one prompt per admission path was refused, each by its own check ("
                          + TGI_REFUSAL.substring("paths: ".length())
                          + ")")
                  .doesNotContain("HTTP 400");
              assertThat(h.status("glm").pods.get(0).rejectionRefusalError).isEqualTo(TGI_REFUSAL);
            });
    assertThat(engine.hits("/generate")).isEqualTo(1);
  }

  @Test
  void aPrefillServerIsNotProbedOnItsOwn() {
    // SGLang prefill whose context length (1,048,576) exceeds its pool (681,280), allowed by the
    // role: a prompt that passes the tokenizer is refused for want of a bootstrap room, before the
    // scheduler's length check, so nothing sent to the pod reaches the incident's path.
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280));
    answers.put(
        "/generate", EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http"));
    FakeEngine engine = h.engine(answers);
    Map<String, String> prefill = Map.of("app", "glm", "role", "prefill");
    h.pod("prefill-0", prefill, engine);
    io.kvguard.customresource.RoleSpec role = role("prefill", Engine.SGLANG, prefill);
    role.setAllowEngineContextAbovePool(true);
    // Even where the platform team accepts the advisories' risk (the version alone would otherwise
    // keep this 0.5.22 prefill pod shut as KnownUnsafeEngine), the probe cannot prove the pod.
    io.kvguard.customresource.ModelDeployment md = withRejectionProbe(600_000, role, 10);
    md.getSpec().setEngineAdvisories(io.kvguard.customresource.AdvisoryMode.Disabled);
    h.create(md);

    awaitGate("prefill-0", "False", "RejectionProbeInconclusive");
    assertThat(h.gate("prefill-0").orElseThrow().getMessage())
        .startsWith(
            "rejection probe: a 681281-token prompt proved"
                + " nothing: not sent: the engine runs in disaggregation mode prefill: sent to this"
                + " server without bootstrap_room")
        .contains("names no router");
    assertThat(engine.hits("/generate")).isZero();
  }

  @Test
  void aLlamaCppBuildThatTruncatesTheOverLongPromptIsRefusedNamingContextShift() {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.llamacpp(16_384, 1, "b4735-73e2ed3c"));
    answers.put(
        "/completion", EngineFixtures.answer("llamacpp-b4735/completion-200-truncated.http"));
    h.pod("serve-0", SERVE, h.engine(answers));
    h.create(withRejectionProbe(16_384, role("serve", Engine.LLAMACPP, SERVE), 10));

    awaitGate("serve-0", "False", "RejectionPathUnsafe");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains(
            "a 16384-token prompt, sized to reach the engine's L1 slot context check (N >= n_ctx),"
                + " was answered with HTTP 200")
        .contains("llama.cpp builds before PR #15416 (August 2025) shift the context by default");
  }

  @Test
  void turningTheRejectionProbeOnSendsThePromptEvenWhenTheSameEditChangesHowPoolsAreAsked() {
    FakeEngine engine = h.engine(sglang(2_040_000, EngineShapes.answersOverLong(LEAK)));
    h.pod("serve-0", SERVE, engine);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");

    // One edit: the rejection probe on, and a new probe timeout (which makes the earlier pool
    // answer stale).
    h.editSpec(
        "glm",
        spec -> {
          RejectionProbeSpec rejection = new RejectionProbeSpec();
          rejection.setEnabled(true);
          rejection.setTimeoutSeconds(10);
          spec.setRejectionProbe(rejection);
          io.kvguard.customresource.ProbeSpec probe = new io.kvguard.customresource.ProbeSpec();
          probe.setTimeoutSeconds(7);
          spec.setProbe(probe);
        });

    // The pool recorded before the edit proves nothing about the over-limit prompt: it is sent, and
    // answered.
    awaitGate("serve-0", "False", "RejectionPathUnsafe");
    assertThat(engine.hits("/generate")).isEqualTo(1);
    await()
        .untilAsserted(() -> assertThat(h.status("glm").pods.get(0).rejectionRefusedBy).isNull());
  }

  @Test
  void anEngineThatAnswersTheOverLimitPromptIsRefusedAndItsAnswerIsWrittenNowhere() {
    h.pod("serve-0", SERVE, h.engine(sglang(2_040_000, EngineShapes.answersOverLong(LEAK))));
    h.create(withRejectionProbe(Engine.SGLANG, 10));

    awaitGate("serve-0", "False", "RejectionPathUnsafe");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("was answered with HTTP 200")
        .contains("sha256");
    await()
        .untilAsserted(
            () ->
                assertThat(h.events())
                    .extracting(Event::getReason)
                    .contains("RejectionPathUnsafe"));
    await()
        .untilAsserted(
            () ->
                assertThat(h.registry.scrape())
                    .contains("kvguard_rejection_probes_total")
                    .containsPattern("result=\"answered\"[^\\n]*\\} 1"));
    String written =
        h.client.getKubernetesSerialization().asJson(h.get("glm"))
            + h.client.getKubernetesSerialization().asJson(h.events())
            + h.client.getKubernetesSerialization().asJson(h.getPod("serve-0"))
            + String.join(
                "\n", logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
    assertThat(written).doesNotContain("CUSTOMER-B").doesNotContain("ACME");
  }

  /**
   * Issue 26 §4 across pods: the operator's registry holds the markers of every pod's prompts, so a
   * pod whose band answer holds the marker of a prompt sent to another pod is named as holding
   * another request's KV; the answer, the marker and the other pod are written nowhere.
   */
  @Test
  void aBandAnswerHoldingAnotherPodsPromptMarkerIsNamedAsEvidenceOfAnotherRequestsKv() {
    FakeEngine first =
        h.engine(sglang(2_040_000, EngineShapes.refusesOverLong(WINDOW + 1, WINDOW)))
            .answerBy("/generate", REFUSES_BOTH_PATHS);
    h.pod("serve-0", SERVE, first);
    h.create(withRejectionProbe(Engine.SGLANG, 10));
    awaitGate("serve-0", "True", "PoolSufficient");
    long[] firstMarker =
        EngineShapes.leadTokenIds(
            first.lastBody("/generate"), "input_ids", io.kvguard.verdict.ProbeMarker.SYMBOLS);
    FakeEngine second =
        h.engine(sglang(2_040_000, EngineShapes.refusesOverLong(WINDOW + 1, WINDOW)))
            .answerBy(
                "/generate",
                EngineShapes.sglangGenerate(
                    WINDOW, WINDOW - 6, n -> EngineShapes.sglangAnswers(LEAK, firstMarker)));

    h.pod("serve-1", SERVE, second);

    awaitGate("serve-1", "False", "RejectionPathUnsafe");
    assertThat(h.gate("serve-1").orElseThrow().getMessage())
        .contains("sized to reach the engine's S4 scheduler validate_input_length")
        .endsWith("; the answer held another probe's marker (evidence of another request's KV)");
    assertThat(h.gate("serve-0").orElseThrow().getStatus()).isEqualTo("True");
    String ids = java.util.Arrays.toString(firstMarker).replace(" ", "");
    String written =
        h.client.getKubernetesSerialization().asJson(h.get("glm"))
            + h.client.getKubernetesSerialization().asJson(h.events())
            + h.client.getKubernetesSerialization().asJson(h.getPod("serve-1"))
            + String.join(
                "\n", logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
    assertThat(written)
        .doesNotContain("CUSTOMER-B")
        .doesNotContain(ids.substring(1, ids.length() - 1));
  }

  @Test
  void anEngineThatHangsOnTheOverLimitPromptFailsClosedInBoundedTime() {
    FakeEngine.Answer hang =
        new FakeEngine.Answer(200, "application/json", "{}".getBytes(), 60_000);
    h.pod("serve-0", SERVE, h.engine(sglang(2_040_000, hang)));
    long started = System.nanoTime();
    h.create(withRejectionProbe(Engine.SGLANG, 2));

    awaitGate("serve-0", "False", "ProbeFailed");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("rejection probe: POST /generate timed out after 2000 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void aRestartedEngineWhosePoolPassesButWhoseRejectionFailsIsGatedShutAgain() {
    FakeEngine engine =
        h.engine(sglang(2_040_000, EngineShapes.refusesOverLong(WINDOW + 1, WINDOW)))
            .answerBy("/generate", REFUSES_BOTH_PATHS);
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.SGLANG, 10));
    awaitGate("serve-0", "True", "PoolSufficient");

    engine.serve(sglang(2_040_000, EngineShapes.answersOverLong(LEAK)));
    h.pods.restartEngine(OperatorHarness.NAMESPACE, "serve-0");

    awaitGate("serve-0", "False", "RejectionPathUnsafe");
    // Two prompts refused before the restart; after it the first is answered and nothing more sent.
    assertThat(engine.hits("/generate")).isEqualTo(3);
  }

  @Test
  void vllmIsAskedWithATokenIdPromptOnTheCompletionsEndpoint() throws Exception {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.vllm(WINDOW, 40_000, 64, 2_000_000L));
    FakeEngine engine = h.engine(answers);
    engine.answerBy(
        "/v1/completions",
        EngineShapes.vllmCompletions(WINDOW, EngineShapes::vllmRefusesAtContext));
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.VLLM, 10));

    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("V2 renderer input-length check (N > max_model_len - max_tokens) refused 1048577")
        .contains("V4 engine prompt-length check (N = max_model_len) refused 1048576");
    assertThat(engine.hits("/v1/completions")).isEqualTo(2);
    JsonNode sent = JSON.readTree(engine.lastBody("/v1/completions"));
    assertThat(sent.get("model").asText()).isEqualTo(h.get("glm").getSpec().getModel());
    assertThat(tokenIds(sent.get("prompt"))).as("V4's prompt, sent last").isEqualTo(1_048_576);
    assertThat(sent.get("max_tokens").asInt()).isZero();
    assertThat(sent.get("echo").asBoolean()).isTrue();
    assertThat(sent.get("stream").asBoolean(true)).isFalse();
  }

  @Test
  void aVllmThatRefusesAboveTheContextButAnswersAtItKeepsTheGateShutNamingV4() {
    // A build without PR #27099's check: V2 refuses C + 1, the engine admits exactly C tokens.
    FakeEngine engine = h.engine(EngineShapes.vllm(WINDOW, 40_000, 64, 2_000_000L));
    engine.answerBy(
        "/v1/completions",
        EngineShapes.vllmCompletions(WINDOW, n -> EngineShapes.answersOverLong(LEAK)));
    h.pod("serve-0", SERVE, engine);
    h.create(withRejectionProbe(Engine.VLLM, 10));

    awaitGate("serve-0", "False", "RejectionPathUnsafe");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains(
            "a 1048576-token prompt, sized to reach the engine's V4 engine prompt-length check (N ="
                + " max_model_len), was answered with HTTP 200")
        .doesNotContain("CUSTOMER-B");
  }

  /**
   * The number of token IDs in a prompt array; fails unless every element is a token ID (a whole
   * number).
   */
  private static int tokenIds(JsonNode prompt) {
    assertThat(prompt).isNotNull();
    assertThat(prompt.isArray()).as("prompt is an array of token IDs").isTrue();
    prompt.forEach(id -> assertThat(id.isInt()).as("token ID %s", id).isTrue());
    return prompt.size();
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeMarker;
import io.kvguard.verdict.RejectionOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The over-limit request per engine, against fake engines that answer as the engines' own source
 * does (fixtures under src/test/resources/engines), as a proxy does, or hang.
 */
class RejectionProbeTest {
  private static final EngineHttp HTTP = EngineHttp.createDefault();
  private final FakeEngine engine = newEngine();
  private final RejectionProbe probe = new RejectionProbe(HTTP);

  private static FakeEngine newEngine() {
    try {
      return new FakeEngine();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void stop() {
    engine.close();
  }

  private EngineEndpoint endpoint(Duration timeout) {
    return EngineEndpoint.of("http", "127.0.0.1", engine.port(), timeout);
  }

  private static Optional<EngineRejection> rejectionOf(String engineName) {
    return switch (engineName) {
      case "sglang" -> new SglangProbe(HTTP).rejection();
      case "vllm" -> new VllmProbe(HTTP).rejection();
      case "tgi" -> new TgiProbe(HTTP).rejection();
      case "llamacpp" -> new LlamaCppProbe(HTTP).rejection();
      default -> new OllamaProbe(HTTP).rejection();
    };
  }

  private static PoolObservation unified(long pool, long context) {
    return new PoolObservation(pool, OptionalLong.of(context), "1.0.0", null, List.of());
  }

  private RejectionOutcome send(String engineName, long promptTokens) {
    return send(
        engineName, promptTokens, unified(2_000_000, promptTokens - 1), EngineRejection.Route.POD);
  }

  private RejectionOutcome send(
      String engineName, long promptTokens, PoolObservation seen, EngineRejection.Route route) {
    if (engineName.equals("tgi")
        && seen.engineInputTokens().isEmpty()
        && seen.engineContextTokens().isPresent()) {
      // TGI's default: max_input_tokens one below max_total_tokens.
      seen = seen.withEngineInputTokens(seen.engineContextTokens().getAsLong() - 1);
    }
    if (engineName.equals("sglang") && seen.engineContextTokens().isPresent()) {
      // SGLang's paths are sized from its /server_info (SglangAdmissionPathsTest covers them): a
      // v0.5.18 pod whose pool holds its context.
      long context = seen.engineContextTokens().getAsLong();
      engine.answer(
          "/server_info",
          EngineShapes.sglang(context, seen.disaggregationMode(), "0.5.18", context + 1)
              .get("/server_info"));
    }
    return probe.send(
        rejectionOf(engineName),
        engineName,
        endpoint(Duration.ofSeconds(5)),
        promptTokens,
        "m",
        seen,
        route);
  }

  private static FakeEngine.Answer answer(int status, String contentType, String body) {
    return new FakeEngine.Answer(status, contentType, body.getBytes(StandardCharsets.UTF_8), 0);
  }

  /**
   * Each engine's refusal, sent the prompt length its fixture states (TGI and llama.cpp check the
   * counts against the prompt sent and the pod's figures): TGI's T2 at X + 1 with its default input
   * limit X − 1 (T3 then has no band), llama.cpp's L1 at N = S as the real d14ce3dab server
   * answered it.
   */
  @ParameterizedTest(name = "{0} refusal {2} is recognised as HTTP {3} {4}")
  @CsvSource(
      delimiter = '|',
      value = {
        "tgi      | /generate       | tgi-3.3.7/generate-422-validation.http                 | 422 | "
            + TgiRejection.T2
            + " | "
            + TgiRejection.MAX_TOTAL_TOKENS_CLASS
            + " | 131073 | 131072",
        "llamacpp | /completion     | llamacpp-d14ce3d/completion-np1-at-context-400.http    | 400 | "
            + LlamaCppRejection.L1
            + " | "
            + LlamaCppRejection.ERROR_CLASS
            + " | 8192 | 8192",
      })
  void eachEnginesOwnRefusalIsRecognisedWithItsStatusAndErrorClass(
      String engineName,
      String path,
      String fixture,
      int status,
      String check,
      String errorClass,
      long tokens,
      long context)
      throws Exception {
    engine.answer(path, EngineFixtures.answer(fixture));

    RejectionOutcome outcome =
        send(engineName, context + 1, unified(2_000_000, context), EngineRejection.Route.POD);

    assertThat(outcome)
        .isEqualTo(
            RejectionOutcome.Refused.ofPaths(
                status,
                List.of(
                    check
                        + " refused "
                        + tokens
                        + " tokens with HTTP "
                        + status
                        + " as "
                        + errorClass),
                context + 1));
    assertThat(engine.hits(path)).isEqualTo(1);
    JsonNode sent = new ObjectMapper().readTree(engine.lastBody(path));
    switch (engineName) {
      case "tgi" -> {
        String inputs = sent.get("inputs").asText();
        assertThat(inputs).hasSize(2 * (int) tokens);
        assertThat(inputs.substring(2 * ProbeMarker.SYMBOLS))
            .isEqualTo(" a".repeat((int) tokens - ProbeMarker.SYMBOLS));
        assertThat(inputs.substring(0, 2 * ProbeMarker.SYMBOLS))
            .as("the marker's words first")
            .matches("( [b-z]){" + ProbeMarker.SYMBOLS + "}");
        assertThat(sent.at("/parameters/max_new_tokens").asInt()).isEqualTo(1);
      }
      default -> {
        assertTokenIds(sent.get("prompt"), (int) tokens);
        assertThat(sent.at("/n_predict").asInt()).isEqualTo(1);
      }
    }
  }

  @ParameterizedTest(name = "vLLM envelope {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 4098 tokens (4097 in the messages, 1 in the completion). Please reduce the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}",
        "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 1 output tokens and your prompt contains 4097 input tokens, for a total of 4098 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\",\"code\":400}}"
      })
  void vllmsRefusalIsRecognisedInBothOfItsEnvelopes(String body) throws Exception {
    engine.answerBy(
        "/v1/completions",
        sent ->
            EngineShapes.tokenIdsIn(sent, "prompt") == 4_097
                ? answer(400, "application/json", body)
                : EngineShapes.vllmRefusesAtContext(4_096));

    assertThat(send("vllm", 4_097))
        .isInstanceOfSatisfying(
            RejectionOutcome.Refused.class,
            r ->
                assertThat(r.pathClasses())
                    .containsExactly(
                        VllmRejection.ERROR_CLASS, VllmRejection.DECODER_PROMPT_CLASS));
    assertThat(engine.hits("/v1/completions")).isEqualTo(2);
    JsonNode sent = new ObjectMapper().readTree(engine.lastBody("/v1/completions"));
    assertThat(sent.get("model").asText()).isEqualTo("m");
    assertTokenIds(sent.get("prompt"), 4_096);
    assertThat(sent.get("max_tokens").asInt()).as("V4's prompt").isZero();
    assertThat(sent.get("echo").asBoolean()).isTrue();
  }

  @Test
  void tgisBodyLimitIsNoRefusalAndNamesThePayloadLimitToRaise() {
    engine.answer("/generate", EngineFixtures.answer("tgi-3.3.7/generate-413-payload-limit.http"));

    RejectionOutcome outcome = send("tgi", 1_048_577);

    // 11 + 2 × 1,048,577 + 36 bytes of JSON: above TGI's default 2,000,000-byte --payload-limit.
    long bodyBytes = engine.lastBody("/generate").length;
    assertThat(bodyBytes).isEqualTo(2_097_201);
    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i -> {
              assertThat(i.promptTokens()).isEqualTo(1_048_577);
              assertThat(i.cause())
                  .startsWith(
                      "POST /generate answered HTTP 413 (text/plain; charset=utf-8), which is not TGI's"
                          + " length refusal (HTTP 422, exactly {\"error\", \"error_type\": \"validation\"}")
                  .contains(
                      "refuse request bodies above --payload-limit before validating them, and this request is"
                          + " 2097201 bytes")
                  .doesNotContain("2000000")
                  .endsWith(
                      "raise the engine's --payload-limit above 2097201 bytes ("
                          + TgiRejection.T2
                          + ")");
            });
  }

  @Test
  void aProxysAnswerThatMentionsTheLengthIsNoRefusal() {
    engine.answer(
        "/v1/completions",
        answer(
            400,
            "text/html",
            "<html><body><h1>400 Bad Request</h1>Request header or Content-Length exceeds the maximum allowed</body></html>"));

    assertThat(send("vllm", 4_097))
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .isEqualTo(
                        "POST /v1/completions answered HTTP 400 (text/html), which is not vLLM's length"
                            + " refusal (HTTP 400, a JSON error of type BadRequestError and code 400 whose message is"
                            + " vLLM's whole \"maximum context length\" sentence with the prompt sent and the pod's"
                            + " max_model_len, or for a prompt of exactly max_model_len tokens its whole \"decoder"
                            + " prompt … plus the number of requested output tokens\" sentence); something other"
                            + " than the engine answered (a proxy, an authentication layer) or an engine build kvguard does not"
                            + " know: point the role's port at the engine itself and check which component answered in the"
                            + " engine's and the proxy's logs ("
                            + VllmRejection.V2
                            + ")"));
  }

  @ParameterizedTest(name = "gateway body {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // OpenAI's own context_length_exceeded wording and envelope, which OpenAI-compatible
        // gateways answer with when they count tokens before forwarding: the engine never saw the
        // prompt.
        "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, your messages resulted in 4097 tokens. Please reduce the length of the messages.\",\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}",
        // A gateway that wraps the upstream's error text and leaves the type empty.
        "{\"error\":{\"message\":\"ContextWindowExceededError: This model's maximum context length is 4096 tokens.\",\"type\":null,\"param\":null,\"code\":\"400\"}}"
      })
  void aGatewaysOpenAiShapedLengthErrorIsNotVllmsRefusal(String body) {
    // vLLM answers every such 400 with error type BadRequestError (create_error_response in
    // vllm/entrypoints/openai/engine/serving.py, and in the older {"object": "error"} envelope
    // alike).
    engine.answer("/v1/completions", answer(400, "application/json", body));

    assertThat(send("vllm", 4_097)).isInstanceOf(RejectionOutcome.Inconclusive.class);
  }

  @Test
  void vllmsRefusalAnsweredWithHttp200IsAnAnswer() {
    engine.answer("/v1/completions", answer(200, "application/json", VllmRejectionTest.CURRENT));

    assertThat(send("vllm", 4_097)).isInstanceOf(RejectionOutcome.Answered.class);
  }

  @Test
  void aGatewayCopyingVllmsSentenceWithItsOwnContextIsNamedByWhatDiffered() {
    engine.answer(
        "/v1/completions",
        answer(
            400,
            "application/json",
            VllmRejectionTest.CURRENT.replace("is 4096 tokens", "is 131072 tokens")));

    assertThat(send("vllm", 4_097))
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .contains(
                        "; the JSON answer is not vLLM's: it states a context length of 131072 tokens, and the"
                            + " pod reports max_model_len 4096. Something other than the engine answered"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "tgi|/generate|422|{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 131072. Given: 4097 `inputs` tokens and 1 `max_new_tokens`\",\"error_type\":\"validation\"}|the JSON answer is not TGI's refusal of this prompt: it states a limit of 131072 tokens, and the pod's /info reports max_total_tokens 4096",
        "llamacpp|/completion|400|{\"error\":{\"code\":400,\"message\":\"request (4096 tokens) exceeds the available context size (131072 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":4096,\"n_ctx\":131072}}|the JSON answer is not llama.cpp's refusal of this prompt: its n_ctx is 131072, and the pod's /props reports a slot n_ctx of 4096",
      })
  void aGatewayCopyingTheEnginesRefusalWithItsOwnContextIsNamedByWhatDiffered(
      String engineName, String path, int status, String body, String seen) {
    engine.answer(path, answer(status, "application/json", body));

    assertThat(send(engineName, 4_097))
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i -> assertThat(i.cause()).contains("; " + seen + ". Something other than the engine"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "tgi|/generate|{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4097 `inputs` tokens and 1 `max_new_tokens`\",\"error_type\":\"validation\"}",
        "llamacpp|/completion|{\"error\":{\"code\":400,\"message\":\"request (4097 tokens) exceeds the available context size (4096 tokens), try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":4097,\"n_ctx\":4096}}",
      })
  void theEnginesRefusalAnsweredWithHttp200IsAnAnswer(String engineName, String path, String body) {
    engine.answer(path, answer(200, "application/json", body));

    assertThat(send(engineName, 4_097)).isInstanceOf(RejectionOutcome.Answered.class);
  }

  @Test
  void anotherEnginesRefusalIsNotThisEnginesRefusal() {
    // A vLLM role whose port reaches an SGLang server: SGLang's refusal proves nothing about vLLM.
    engine.answer(
        "/v1/completions", EngineFixtures.answer("sglang-0.5.6/generate-400-context-length.http"));
    assertThat(send("vllm", 1_048_577)).isInstanceOf(RejectionOutcome.Inconclusive.class);
  }

  @Test
  void anUnauthorisedAnswerIsNoRefusal() {
    engine.answer("/generate", answer(401, "application/json", "{\"error\":\"unauthorized\"}"));
    assertThat(send("sglang", 10))
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .startsWith(
                        "POST /generate answered HTTP 401 (application/json), which is not SGLang's"));
  }

  @ParameterizedTest(name = "{0} answering 200 on {1} is unsafe")
  @CsvSource({
    "sglang, /generate",
    "vllm, /v1/completions",
    "llamacpp, /completion",
    "tgi, /generate"
  })
  void anAnswerIsReportedByLengthAndHashOnly(String engineName, String path) {
    engine.answer(path, answer(200, "application/json", "{\"text\":\"someone else's data\"}"));

    RejectionOutcome outcome = send(engineName, 4_097);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Answered.class,
            a -> {
              assertThat(a.status()).isEqualTo(200);
              assertThat(a.bodyBytes()).isEqualTo(30);
              assertThat(a.bodySha256()).isEqualTo(sha256("{\"text\":\"someone else's data\"}"));
            });
    assertThat(outcome.toString()).doesNotContain("someone else");
  }

  @Test
  void aLlamaCppBuildThatTruncatesTheOverLongPromptIsNamedAsSuch() {
    engine.answer(
        "/completion", EngineFixtures.answer("llamacpp-b4735/completion-200-truncated.http"));

    assertThat(send("llamacpp", 16_385))
        .isInstanceOfSatisfying(
            RejectionOutcome.Answered.class,
            a -> {
              assertThat(a.status()).isEqualTo(200);
              assertThat(a.meaning())
                  .startsWith(
                      "llama.cpp builds before PR #15416 (August 2025) shift the context by default:"
                          + " they truncate an over-long prompt and answer it");
            });
  }

  @Test
  void aServerErrorIsAnAnswerNotARefusal() {
    engine.answer(
        "/generate",
        answer(500, "application/json", "{\"error\":\"CUDA error: an illegal memory access\"}"));
    assertThat(send("sglang", 10)).isInstanceOf(RejectionOutcome.Answered.class);
  }

  @Test
  void aPrefillServerIsNotProbedOnItsOwn() {
    // SGLang prefill: a prompt the tokenizer passes is refused at once for want of a bootstrap
    // room (v0.5.18 scheduler.py:2443-2460), before the length check of the incident's path.
    engine.answer(
        "/generate", EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http"));
    PoolObservation prefill =
        new PoolObservation(681_280, OptionalLong.of(1_048_576), "0.5.22", "prefill", List.of());

    RejectionOutcome outcome = send("sglang", 681_281, prefill, EngineRejection.Route.POD);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .startsWith("not sent: the engine runs in disaggregation mode prefill: ")
                    .contains(
                        "refused at once with HTTP 400 \"Disaggregated request received without"
                            + " bootstrap room id\" (SGLang since v0.4.6.post5, PR #6504")
                    .contains("names no router")
                    .contains("--pd-router")
                    .doesNotContain("300")
                    .doesNotContain("500"));
    assertThat(engine.totalHits()).isZero();
  }

  @Test
  void throughThePrefillDecodeRouterBothPathsAreSent() {
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(
            1_048_576, 1_048_570, n -> EngineShapes.refusesBand(n, 1_048_570)));
    PoolObservation prefill =
        new PoolObservation(2_040_000, OptionalLong.of(1_048_576), "0.5.18", "prefill", List.of());

    RejectionOutcome outcome = send("sglang", 1_048_577, prefill, EngineRejection.Route.PD_ROUTER);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Refused.class,
            r ->
                assertThat(r.pathClasses())
                    .containsExactly("context-length check", "validate_input_length"));
  }

  @Test
  void aHangingEngineFailsWithinTheTimeout() {
    engine.answer(
        "/generate",
        new FakeEngine.Answer(
            200, "application/json", "{}".getBytes(StandardCharsets.UTF_8), 10_000));
    long started = System.nanoTime();
    RejectionOutcome outcome =
        probe.send(
            rejectionOf("sglang"),
            "sglang",
            endpoint(Duration.ofMillis(500)),
            10,
            "m",
            unified(100, 9),
            EngineRejection.Route.POD);
    assertThat(outcome).isInstanceOf(RejectionOutcome.Failed.class);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
  }

  @Test
  void enginesWithoutAnOverLimitFormFailClosed() {
    assertThat(send("ollama", 10))
        .isInstanceOfSatisfying(
            RejectionOutcome.Failed.class,
            f ->
                assertThat(f.cause())
                    .isEqualTo("kvguard has no rejection probe for engine ollama"));
    assertThat(engine.totalHits()).isZero();
  }

  /** vLLM V2 and V4, TGI T2 and T3 (input limit 3000 under a total of 4096), llama.cpp L1. */
  private RejectionOutcome sendPaths(String engineName) {
    return send(engineName, 4_097, pathsSeen(engineName), EngineRejection.Route.POD);
  }

  private static PoolObservation pathsSeen(String engineName) {
    PoolObservation seen = unified(2_000_000, 4_096);
    return engineName.equals("tgi") ? seen.withEngineInputTokens(3_000) : seen;
  }

  private void serve(String engineName, java.util.function.LongFunction<FakeEngine.Answer> second) {
    switch (engineName) {
      case "vllm" ->
          engine.answerBy("/v1/completions", EngineShapes.vllmCompletions(4_096, second));
      case "tgi" -> engine.answerBy("/generate", EngineShapes.tgiGenerate(4_096, 3_000, second));
      default -> engine.answerBy("/completion", EngineShapes.llamaCompletion(4_096, second));
    }
  }

  /**
   * Probes another pod (an SGLang that refuses both paths) with the same probe, as the operator
   * probes every pod: the marker of that probe's last prompt, as the pod received it.
   */
  private long[] markerSentToAnotherPod() throws java.io.IOException {
    try (FakeEngine other = new FakeEngine()) {
      other.serve(EngineShapes.sglang(4_096, null, "0.5.18", 4_097));
      other.answerBy(
          "/generate",
          EngineShapes.sglangGenerate(4_096, 4_090, n -> EngineShapes.refusesBand(n, 4_090)));
      RejectionOutcome refused =
          probe.send(
              rejectionOf("sglang"),
              "sglang",
              EngineEndpoint.of("http", "127.0.0.1", other.port(), Duration.ofSeconds(5)),
              4_097,
              "m",
              unified(2_000_000, 4_096),
              EngineRejection.Route.POD);
      assertThat(refused).isInstanceOf(RejectionOutcome.Refused.class);
      return EngineShapes.leadTokenIds(
          other.lastBody("/generate"), "input_ids", ProbeMarker.SYMBOLS);
    }
  }

  /** The answer of a build that admitted the band, per engine and kind of content. */
  private static FakeEngine.Answer bandAnswer(String engineName, String content, long[] marker) {
    if (content.equals("garbage")) {
      return answer(200, "text/html", "<html>upstream says hi</html>");
    }
    boolean leak = content.equals("another probe's marker");
    long[] ids = leak ? marker : new long[] {104};
    StringBuilder words = new StringBuilder();
    for (long id : marker) {
      words.append(' ').append((char) ('b' + (id - ProbeMarker.FIRST_TOKEN_ID)));
    }
    return switch (engineName) {
      case "sglang" -> EngineShapes.sglangAnswers("someone else's data", ids);
      case "llamacpp" -> EngineShapes.llamaAnswers("someone else's data", ids);
      case "tgi" -> EngineShapes.tgiAnswers(leak ? "Sure:" + words : "someone else's data");
      default ->
          leak
              ? answer(
                  200,
                  "application/json",
                  "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
                      + "\"text\":\"someone else's data\",\"token_ids\":"
                      + java.util.Arrays.toString(ids).replace(" ", "")
                      + "}]}")
              : EngineShapes.answersOverLong("someone else's data");
    };
  }

  /**
   * Issue 26 §4: a build that answers a band prompt with 200 is RejectionPathUnsafe, and the
   * message says what its answer's content held: another probe's marker (sent to another pod),
   * none, or that it could not be checked and why. Never the answer or the marker.
   */
  @ParameterizedTest(name = "{0} answering the band with {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "sglang | another probe's marker | the answer held another probe's marker (evidence of"
            + " another request's KV)",
        "sglang | no marker | the answer held no other probe's marker (it carried 1 token or word, too few to"
            + " hold one: this is no evidence either way)",
        "sglang | garbage | the answer's content could not be checked for markers (the answer is"
            + " not the JSON object SGLang answers (content type text/html))",
        "llamacpp | another probe's marker | the answer held another probe's marker (evidence of"
            + " another request's KV)",
        "llamacpp | no marker | the answer held no other probe's marker (it carried 1 token or word, too few to"
            + " hold one: this is no evidence either way)",
        "llamacpp | garbage | the answer's content could not be checked for markers (the answer is"
            + " not the JSON object llama.cpp answers (content type text/html))",
        "tgi | another probe's marker | the answer held another probe's marker (evidence of another"
            + " request's KV)",
        "tgi | no marker | the answer held no other probe's marker (it carried 3 tokens or words, too few to"
            + " hold one: this is no evidence either way)",
        "tgi | garbage | the answer's content could not be checked for markers (the answer is not"
            + " the JSON object TGI answers (content type text/html))",
        "vllm | another probe's marker | the answer held another probe's marker (evidence of another"
            + " request's KV)",
        "vllm | no marker | the answer's content could not be checked for markers (vLLM's answer"
            + " carries text and no token IDs unless asked for return_token_ids, which kvguard does"
            + " not ask)",
        "vllm | garbage | the answer's content could not be checked for markers (the answer is not"
            + " the JSON object vLLM answers (content type text/html))"
      })
  void anAnswerToABandPromptSaysWhetherItHeldAnotherProbesMarker(
      String engineName, String content, String finding) throws Exception {
    long[] marker = markerSentToAnotherPod();
    java.util.function.LongFunction<FakeEngine.Answer> band =
        n -> bandAnswer(engineName, content, marker);
    if (engineName.equals("sglang")) {
      engine.answerBy("/generate", EngineShapes.sglangGenerate(4_096, 4_090, band));
    } else {
      serve(engineName, band);
    }

    RejectionOutcome outcome = sendPaths(engineName);

    var verdict =
        io.kvguard.verdict.RejectionJudge.judge(
            new io.kvguard.verdict.PoolVerdict(
                io.kvguard.verdict.Verdict.Verified,
                io.kvguard.verdict.GateReason.PoolSufficient,
                "pool holds the context"),
            outcome);
    assertThat(verdict.reason()).isEqualTo(io.kvguard.verdict.GateReason.RejectionPathUnsafe);
    assertThat(verdict.message()).endsWith("; " + finding);
    String ids = java.util.Arrays.toString(marker).replace(" ", "");
    assertThat(verdict.message())
        .doesNotContain("someone else")
        .doesNotContain("upstream says hi")
        .doesNotContain(ids.substring(1, ids.length() - 1));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"vllm", "tgi", "llamacpp"})
  void anEngineThatRefusesEveryPathWithItsOwnCheckIsRefusedPerPath(String engineName) {
    serve(
        engineName,
        n ->
            switch (engineName) {
              case "vllm" -> EngineShapes.vllmRefusesAtContext(n);
              case "tgi" -> EngineShapes.tgiRefusesInputLength(n, 3_000);
              default -> EngineShapes.llamaRefusesContext(n, 4_096);
            });

    RejectionOutcome outcome = sendPaths(engineName);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Refused.class,
            r -> {
              assertThat(r.severalPaths()).isTrue();
              assertThat(r.pathClasses())
                  .containsExactlyElementsOf(
                      switch (engineName) {
                        case "vllm" ->
                            List.of(VllmRejection.ERROR_CLASS, VllmRejection.DECODER_PROMPT_CLASS);
                        case "tgi" ->
                            List.of(
                                TgiRejection.MAX_TOTAL_TOKENS_CLASS,
                                TgiRejection.INPUT_LENGTH_CLASS);
                        default -> List.of(LlamaCppRejection.ERROR_CLASS);
                      });
              assertThat(
                      rejectionOf(engineName)
                          .orElseThrow()
                          .recognises(r.status(), r.errorClass(), pathsSeen(engineName)))
                  .as("this build's record is carried over")
                  .isTrue();
            });
    assertThat(outcome.toString())
        .contains(
            switch (engineName) {
              case "vllm" -> VllmRejection.V4 + " refused 4096 tokens";
              case "tgi" -> TgiRejection.T3 + " refused 3001 tokens";
              default -> LlamaCppRejection.L1 + " refused 4096 tokens";
            });
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"vllm", "tgi", "llamacpp"})
  void anEngineThatAnswersOnePathWith200IsAnAnswerNamingThatPath(String engineName) {
    // vLLM before PR #27099 has no V4 check; a TGI or llama.cpp build that admitted the band.
    serve(engineName, n -> EngineShapes.answersOverLong("someone else's data"));

    RejectionOutcome outcome = sendPaths(engineName);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Answered.class,
            a -> {
              assertThat(a.status()).isEqualTo(200);
              assertThat(a.check())
                  .isEqualTo(
                      switch (engineName) {
                        case "vllm" -> VllmRejection.V4;
                        case "tgi" -> TgiRejection.T3;
                        default -> LlamaCppRejection.L1;
                      });
            });
    var verdict =
        io.kvguard.verdict.RejectionJudge.judge(
            new io.kvguard.verdict.PoolVerdict(
                io.kvguard.verdict.Verdict.Verified,
                io.kvguard.verdict.GateReason.PoolSufficient,
                "pool holds the context"),
            outcome);
    assertThat(verdict.reason()).isEqualTo(io.kvguard.verdict.GateReason.RejectionPathUnsafe);
    assertThat(verdict.message())
        .contains("sized to reach the engine's " + ((RejectionOutcome.Answered) outcome).check());
    assertThat(outcome.toString()).doesNotContain("someone else");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"vllm", "tgi"})
  void aPromptRefusedByTheOtherPathsCheckIsInconclusive(String engineName) {
    // vLLM: a renderer that counted the V4 prompt against the context (V2's sentence with the
    // request's own numbers); TGI: a tokenizer that made 4096 tokens of the 3001 units, so the
    // total check refused the prompt sized for the input check.
    serve(
        engineName,
        n ->
            engineName.equals("vllm")
                ? answer(
                    400,
                    "application/json",
                    "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens."
                        + " However, you requested 0 output tokens and your prompt contains 4096 input"
                        + " tokens, for a total of 4096 tokens. Please reduce the length of the input"
                        + " prompt or the number of requested output tokens. (parameter=input_tokens,"
                        + " value=4096)\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\","
                        + "\"code\":400}}")
                : answer(
                    422,
                    "application/json",
                    "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <="
                        + " 4096. Given: 4096 `inputs` tokens and 1 `max_new_tokens`\","
                        + "\"error_type\":\"validation\"}"));

    assertThat(sendPaths(engineName))
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .contains(
                        "-token prompt sized for the "
                            + (engineName.equals("vllm") ? VllmRejection.V4 : TgiRejection.T3)
                            + " with another check's refusal"));
  }

  private static void assertTokenIds(JsonNode ids, int count) {
    assertThat(ids.isArray()).isTrue();
    assertThat(ids.size()).isEqualTo(count);
    for (int i = 0; i < count; i++) {
      if (i < ProbeMarker.SYMBOLS) {
        assertThat(ids.get(i).asLong())
            .as("the marker's token IDs first")
            .isBetween(
                ProbeMarker.FIRST_TOKEN_ID, ProbeMarker.FIRST_TOKEN_ID + ProbeMarker.ALPHABET - 1);
      } else {
        assertThat(ids.get(i).asInt()).isEqualTo(100);
      }
    }
  }

  private static String sha256(String text) {
    try {
      return java.util.HexFormat.of()
          .formatHex(
              java.security.MessageDigest.getInstance("SHA-256")
                  .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

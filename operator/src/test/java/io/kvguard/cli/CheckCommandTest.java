package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.FakeEngineOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code check} against fake engines: the exit code a pipeline branches on, and what it prints. */
class CheckCommandTest {
  private static final long WINDOW = 1_048_576;
  private final List<FakeEngine> engines = new ArrayList<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @AfterEach
  void closeEngines() {
    engines.forEach(FakeEngine::close);
  }

  private String url(FakeEngineOptions options) throws IOException {
    FakeEngine engine = new FakeEngine().serve(options.answers());
    engines.add(engine);
    return "http://127.0.0.1:" + engine.port();
  }

  private int check(String... args) {
    return new CheckCommand(
            io.kvguard.probe.EngineProbes.standard(io.kvguard.probe.EngineHttp.createDefault()))
        .run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void anEngineWhosePoolHoldsTheWindowIsVerifiedWithExitZero() throws IOException {
    String url = url(FakeEngineOptions.sglang(2_040_000, 2, WINDOW, null));

    int exit = check("--engine", "sglang", "--url", url, "--context-window", "1048576");

    assertThat(exit).isZero();
    assertThat(out())
        .contains(
            "Verified (PoolSufficient)",
            "KV pool         2040000 tokens",
            "engine context  1048576 tokens",
            "engine version  0.5.22",
            "mode            unified",
            "pool is the smallest of 2 data-parallel ranks",
            "(exit 0)");
    assertThat(err()).isEmpty();
  }

  @Test
  void theIncidentsPrefillEngineIsRefusedWithExitOneAndTheNumbers() throws IOException {
    String url = url(FakeEngineOptions.sglang(681_280, 2, WINDOW, "prefill"));

    int exit = check("--engine", "sglang", "--url", url, "--context-window", "1048576");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains(
            "Refused (PoolTooSmall)",
            "KV pool 681280 tokens < context window 1048576",
            "REFUSED",
            "(exit 1)");
    assertThat(out()).doesNotContain(EngineShapes.SECRET_API_KEY);
  }

  @Test
  void theRatioIsApplied() throws IOException {
    String url = url(FakeEngineOptions.sglang(2_040_000, 2, WINDOW, null));

    // 2,040,000 < 2 x 1,048,576 = 2,097,152
    assertThat(
            check(
                "--engine",
                "sglang",
                "--url",
                url,
                "--context-window",
                "1048576",
                "--min-pool-ratio",
                "2"))
        .isEqualTo(1);
    assertThat(out()).contains("PoolTooSmall", "× 2.0");
  }

  @Test
  void anEngineAdmittingMoreThanItsPoolIsRefusedUnlessTheRoleOptsOut() throws IOException {
    String url = url(FakeEngineOptions.sglang(2_040_000, 1, 4_000_000, null));

    assertThat(check("--engine", "sglang", "--url", url, "--context-window", "1048576"))
        .isEqualTo(1);
    assertThat(out()).contains("Refused (EngineContextExceedsPool)");

    out.reset();
    assertThat(
            check(
                "--engine",
                "sglang",
                "--url",
                url,
                "--context-window",
                "1048576",
                "--allow-engine-context-above-pool"))
        .isZero();
    assertThat(out()).contains("engine context above the pool allowed");
  }

  @Test
  void vllmIsProbedThroughItsOwnProbe() throws IOException {
    String url = url(new FakeEngineOptions("vllm", 1_100_000, 2, WINDOW, null, "0.11.0"));

    assertThat(check("--engine", "vllm", "--url", url, "--context-window", "1048576")).isZero();
    assertThat(out()).contains("KV pool         1100000 tokens");
  }

  @Test
  void jsonOutputCarriesTheSameFactsAndParses() throws IOException {
    String url = url(FakeEngineOptions.sglang(681_280, 2, WINDOW, "prefill"));

    int exit =
        check(
            "--engine",
            "sglang",
            "--url",
            url + "/",
            "--context-window",
            "1048576",
            "--output",
            "json");

    JsonNode json = new ObjectMapper().readTree(out());
    assertThat(exit).isEqualTo(1);
    assertThat(json.get("exitCode").asInt()).isEqualTo(1);
    assertThat(json.get("engine").asText()).isEqualTo("sglang");
    assertThat(json.get("url").asText()).isEqualTo(url);
    assertThat(json.get("verdict").asText()).isEqualTo("Refused");
    assertThat(json.get("reason").asText()).isEqualTo("PoolTooSmall");
    assertThat(json.get("poolTokens").asLong()).isEqualTo(681_280);
    assertThat(json.get("engineContextTokens").asLong()).isEqualTo(WINDOW);
    assertThat(json.get("engineVersion").asText()).isEqualTo("0.5.22");
    assertThat(json.get("disaggregationMode").asText()).isEqualTo("prefill");
    assertThat(json.get("contextWindow").asLong()).isEqualTo(WINDOW);
    assertThat(json.get("minPoolRatio").asDouble()).isEqualTo(1.0);
    assertThat(json.get("message").asText())
        .contains("KV pool 681280 tokens < context window 1048576");
    List<String> notes = new ArrayList<>();
    json.get("notes").forEach(n -> notes.add(n.asText()));
    assertThat(notes).contains("pool is the smallest of 2 data-parallel ranks");
  }

  @Test
  void anEngineThatDoesNotAnswerIsAFailedProbeWithExitTwo() throws IOException {
    FakeEngine engine =
        new FakeEngine()
            .answer("/server_info", Answer.status(503))
            .answer("/get_server_info", Answer.status(503));
    engines.add(engine);

    int exit =
        check(
            "--engine",
            "sglang",
            "--url",
            "http://127.0.0.1:" + engine.port(),
            "--context-window",
            "1048576",
            "--output",
            "json");

    JsonNode json = new ObjectMapper().readTree(out());
    assertThat(exit).isEqualTo(2);
    assertThat(json.get("verdict").asText()).isEqualTo("Unknown");
    assertThat(json.get("reason").asText()).isEqualTo("ProbeFailed");
    assertThat(json.get("message").asText()).contains("503");
    assertThat(json.get("poolTokens").isNull()).isTrue();
  }

  @Test
  void aClosedPortIsAFailedProbe() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }

    assertThat(
            check(
                "--engine",
                "sglang",
                "--url",
                "http://127.0.0.1:" + port,
                "--context-window",
                "1048576"))
        .isEqualTo(2);
    assertThat(out())
        .contains(
            "Unknown (ProbeFailed)", "KV pool         unknown (the probe failed)", "PROBE FAILED");
  }

  @Test
  void aHungEngineFailsWithinTheTimeout() throws IOException {
    FakeEngine engine =
        new FakeEngine().serve(FakeEngineOptions.sglang(2_040_000, 1, WINDOW, null).answers());
    engine.answer(
        "/server_info",
        new Answer(200, "application/json", "{}".getBytes(StandardCharsets.UTF_8), 10_000));
    engines.add(engine);
    long started = System.nanoTime();

    int exit =
        check(
            "--engine",
            "sglang",
            "--url",
            "http://127.0.0.1:" + engine.port(),
            "--context-window",
            "1048576",
            "--timeout-seconds",
            "1");

    assertThat(exit).isEqualTo(2);
    assertThat(out()).contains("timed out");
    assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5_000);
  }

  @Test
  void usageErrorsExitTwoAndSayWhat() {
    assertUsageError("--engine is required", "--url", "http://h:1", "--context-window", "1");
    assertUsageError(
        "--engine must be one of "
            + String.join(", ", Arrays.stream(Engine.values()).map(Engine::wireName).toList()),
        "--engine",
        "tgi-nope",
        "--url",
        "http://h:1",
        "--context-window",
        "1");
    assertUsageError("--url is required", "--engine", "sglang", "--context-window", "1");
    assertUsageError(
        "--url must be the engine's root",
        "--engine",
        "sglang",
        "--url",
        "http://h:1/v1",
        "--context-window",
        "1");
    assertUsageError(
        "--url must start with http:// or https://",
        "--engine",
        "sglang",
        "--url",
        "ftp://h:1",
        "--context-window",
        "1");
    assertUsageError(
        "--url must not carry credentials",
        "--engine",
        "sglang",
        "--url",
        "http://u:p@h:1",
        "--context-window",
        "1");
    assertUsageError("--context-window is required", "--engine", "sglang", "--url", "http://h:1");
    assertUsageError(
        "--context-window must be a whole number",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1M");
    assertUsageError(
        "--min-pool-ratio must be a finite number >= 1.0",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--min-pool-ratio",
        "0.5");
    assertUsageError(
        "--timeout-seconds must be between 1 and 300",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--timeout-seconds",
        "0");
    assertUsageError(
        "--output must be text or json",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--output",
        "yaml");
    assertUsageError(
        "unknown option --window", "--engine", "sglang", "--url", "http://h:1", "--window", "1");
    assertUsageError("--engine given twice", "--engine", "sglang", "--engine", "vllm");
    assertUsageError("--url needs a value", "--engine", "sglang", "--url");
    assertUsageError("unexpected argument 'sglang'", "sglang");
  }

  private void assertUsageError(String message, String... args) {
    out.reset();
    err.reset();
    assertThat(check(args)).as(String.join(" ", args)).isEqualTo(2);
    assertThat(err())
        .as(String.join(" ", args))
        .contains("kvguard check: " + message)
        .contains("Usage:");
    assertThat(out()).isEmpty();
  }

  @Test
  void helpPrintsUsageAndExitsZero() {
    assertThat(check("--help")).isZero();
    assertThat(out())
        .contains(
            "Usage:", "--context-window", "Exit codes: 0 verified, 1 refused, 2 probe failed");
  }

  private String url(java.util.Map<String, Answer> answers) throws IOException {
    FakeEngine engine = new FakeEngine().serve(answers);
    engines.add(engine);
    return "http://127.0.0.1:" + engine.port();
  }

  private FakeEngine last() {
    return engines.get(engines.size() - 1);
  }

  private static java.util.Map<String, Answer> with(
      java.util.Map<String, Answer> shapes, String path, Answer answer) {
    java.util.Map<String, Answer> answers = new java.util.HashMap<>(shapes);
    answers.put(path, answer);
    return answers;
  }

  @Test
  void theRejectionProbeVerifiesAnEngineThatRefusesWithItsOwnError() throws IOException {
    // check runs the operator's RejectionProbe: one prompt per SGLang admission path (issue 26).
    String url = url(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    last()
        .answerBy(
            "/generate",
            EngineShapes.sglangGenerate(
                WINDOW, WINDOW - 6, n -> EngineShapes.refusesBand(n, WINDOW - 6)));

    int exit =
        check(
            "--engine", "sglang", "--url", url, "--context-window", "1048576", "--rejection-probe");

    assertThat(exit).isZero();
    assertThat(out())
        .contains(
            "one prompt per admission path was refused, each by its own check (S1 tokenizer"
                + " context-length check refused 1048576 tokens with HTTP 400 as context-length check;"
                + " S4 scheduler validate_input_length (max_req_input_len) refused 1048570 tokens with"
                + " HTTP 400 as validate_input_length)",
            "VERIFIED: the pool holds the promised window and the engine refused the over-long prompt (exit 0)");
    assertThat(last().hits("/generate")).isEqualTo(2);
  }

  @Test
  void anEngineThatRefusesOverContextButAnswersTheBandIsRefused() throws IOException {
    String url = url(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    last()
        .answerBy(
            "/generate",
            EngineShapes.sglangGenerate(
                WINDOW, WINDOW - 6, n -> EngineShapes.answersOverLong("CUSTOMER-B")));

    int exit =
        check(
            "--engine", "sglang", "--url", url, "--context-window", "1048576", "--rejection-probe");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains(
            "RejectionPathUnsafe",
            "S4 scheduler validate_input_length",
            "the answer's content could not be checked for markers (the answer has no output_ids"
                + " list, which SGLang's /generate answers carry)")
        .doesNotContain("CUSTOMER-B");
  }

  /**
   * preflight.md: check knows only the markers of its own run. A command run twice (one process,
   * two engines) must not count the first run's marker as another probe's in the second.
   */
  @Test
  void aSecondRunKnowsOnlyItsOwnMarkers() throws IOException {
    String url = url(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    java.util.concurrent.atomic.AtomicReference<byte[]> firstOverContext =
        new java.util.concurrent.atomic.AtomicReference<>();
    var sglang =
        EngineShapes.sglangGenerate(
            WINDOW,
            WINDOW - 6,
            n ->
                EngineShapes.sglangAnswers(
                    "CUSTOMER-B",
                    EngineShapes.leadTokenIds(
                        firstOverContext.get(),
                        "input_ids",
                        io.kvguard.verdict.ProbeMarker.SYMBOLS)));
    last()
        .answerBy(
            "/generate",
            body -> {
              if (EngineShapes.tokenIdsIn(body, "input_ids") >= WINDOW) {
                firstOverContext.compareAndSet(null, body);
              }
              return sglang.apply(body);
            });
    CheckCommand command =
        new CheckCommand(
            io.kvguard.probe.EngineProbes.standard(io.kvguard.probe.EngineHttp.createDefault()));
    String[] args = {
      "--engine", "sglang", "--url", url, "--context-window", "1048576", "--rejection-probe"
    };
    PrintStream errors = new PrintStream(err, true, StandardCharsets.UTF_8);

    command.run(
        args, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), errors);
    int exit = command.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), errors);

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains("RejectionPathUnsafe", "the answer held no other probe's marker")
        .doesNotContain("another probe's marker (evidence");
  }

  /**
   * Issue 26 §4, as the operator reports it: the band prompt answered from the KV of the S1 prompt
   * sent just before (its marker in output_ids).
   */
  @Test
  void aBandAnswerHoldingTheOtherPromptsMarkerIsNamedAsEvidenceOfAnotherRequestsKv()
      throws IOException {
    String url = url(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    java.util.concurrent.atomic.AtomicReference<byte[]> overContext =
        new java.util.concurrent.atomic.AtomicReference<>();
    var sglang =
        EngineShapes.sglangGenerate(
            WINDOW,
            WINDOW - 6,
            n ->
                EngineShapes.sglangAnswers(
                    "CUSTOMER-B",
                    EngineShapes.leadTokenIds(
                        overContext.get(), "input_ids", io.kvguard.verdict.ProbeMarker.SYMBOLS)));
    last()
        .answerBy(
            "/generate",
            body -> {
              if (EngineShapes.tokenIdsIn(body, "input_ids") >= WINDOW) {
                overContext.set(body);
              }
              return sglang.apply(body);
            });

    int exit =
        check(
            "--engine", "sglang", "--url", url, "--context-window", "1048576", "--rejection-probe");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains(
            "RejectionPathUnsafe",
            "the answer held another probe's marker (evidence of another request's KV)")
        .doesNotContain("CUSTOMER-B");
  }

  @Test
  // Every engine's prompts are sized from its own limits (issue 26): the margin keys the probe
  // only.
  void marginTokensKeyTheProbeButThePathsAreSizedFromTheEnginesLimits() throws IOException {
    String url =
        url(
            with(
                EngineShapes.tgi3(WINDOW, 2_040_000, "3.3.7"),
                "/generate",
                // TGI v3.3.7's refusal of this prompt (router/src/validation.rs:145-179), with the
                // numbers of the prompt sent: the whole answer is matched, counts included.
                new Answer(
                    422,
                    "application/json",
                    ("{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must"
                            + " be <= 1048576. Given: 1048578 `inputs` tokens and 1 `max_new_tokens`\","
                            + "\"error_type\":\"validation\"}")
                        .getBytes(StandardCharsets.UTF_8),
                    0)));

    int exit =
        check(
            "--engine",
            "tgi",
            "--url",
            url,
            "--context-window",
            "1048576",
            "--rejection-probe",
            "--margin-tokens",
            "64",
            "--output",
            "json");

    assertThat(exit).isZero();
    JsonNode json = new ObjectMapper().readTree(out());
    assertThat(json.at("/rejectionProbe/result").asText()).isEqualTo("refused");
    assertThat(json.at("/rejectionProbe/promptTokens").asLong()).isEqualTo(1_048_640);
    assertThat(json.at("/rejectionProbe/refusalStatus").asInt()).isEqualTo(422);
    assertThat(json.at("/rejectionProbe/refusalError").asText())
        .isEqualTo(
            "paths: T2 total check (N + max_new_tokens > max_total_tokens)"
                + " refused 1048577 tokens with HTTP 422 as validation: MaxTotalTokens, whole answer"
                + " matched");
    assertThat(new ObjectMapper().readTree(last().lastBody("/generate")).get("inputs").asText())
        .as("T2 at X + 1, whatever the margin; TGI's default input limit X - 1 leaves T3 no band")
        .hasSize(2 * 1_048_577)
        .endsWith(" a".repeat(1_048_577 - io.kvguard.verdict.ProbeMarker.SYMBOLS));
  }

  @Test
  void tgisBodyLimitIsInconclusiveWithExitTwo() throws IOException {
    String url =
        url(
            with(
                EngineShapes.tgi3(WINDOW, 2_040_000, "3.3.7"),
                "/generate",
                EngineFixtures.answer("tgi-3.3.7/generate-413-payload-limit.http")));

    int exit =
        check(
            "--engine",
            "tgi",
            "--url",
            url,
            "--context-window",
            "1048576",
            "--rejection-probe",
            "--output",
            "json");

    assertThat(exit).isEqualTo(2);
    JsonNode json = new ObjectMapper().readTree(out());
    assertThat(json.get("reason").asText()).isEqualTo("RejectionProbeInconclusive");
    assertThat(json.get("message").asText())
        .contains("raise the engine's --payload-limit above 2097201 bytes (T2 total check");
    assertThat(json.at("/rejectionProbe/result").asText()).isEqualTo("inconclusive");
    assertThat(json.at("/rejectionProbe/refusalStatus").isNull()).isTrue();
  }

  @Test
  void anEngineThatAnswersTheOverLongPromptIsRefusedWithExitOneAndItsAnswerIsNotPrinted()
      throws IOException {
    String url =
        url(
            with(
                EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000),
                "/generate",
                EngineShapes.answersOverLong("CUSTOMER-B invoice 4471")));

    int exit =
        check(
            "--engine", "sglang", "--url", url, "--context-window", "1048576", "--rejection-probe");

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains("Refused (RejectionPathUnsafe)", "rejection       answered (see message)")
        .doesNotContain("CUSTOMER-B");
  }

  @Test
  void aPrefillServerIsProbedThroughItsRouterOnly() throws IOException {
    // Context length 1,048,576 above the pool of 681,280 (allowed): the 681,281-token prompt passes
    // SGLang's tokenizer.
    java.util.Map<String, Answer> prefill =
        EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280);
    String direct =
        url(
            with(
                prefill,
                "/generate",
                EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http")));

    int exit =
        check(
            "--engine",
            "sglang",
            "--url",
            direct,
            "--context-window",
            "600000",
            "--allow-engine-context-above-pool",
            "--rejection-probe");

    // Sent to the pod itself, 0.5.22 (named as fixed by the post-mortem alone) clears nothing, and
    // the message points at the router.
    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains(
            "Refused (KnownUnsafeEngine)",
            "reaching release 0.5.22 does not clear advisory sglang-pd-abort-before-0.5.22",
            "--pd-router");
    assertThat(last().hits("/generate")).isZero();

    out.reset();
    // The router proxies /server_info and /v1/models to the first prefill worker and adds the
    // bootstrap fields.
    String router = url(prefill);
    last()
        .answerBy(
            "/generate",
            EngineShapes.sglangGenerate(
                WINDOW, 681_274, n -> EngineShapes.refusesBand(n, 681_274)));
    // Through the router the same paths would be sent, but at 0.5.22 kvguard has not read the
    // scheduler's formula, so the band cannot be checked (builds before 0.5.22 are refused by the
    // advisory): nothing is sent and nothing verified.
    assertThat(
            check(
                "--engine",
                "sglang",
                "--url",
                router,
                "--context-window",
                "600000",
                "--allow-engine-context-above-pool",
                "--rejection-probe",
                "--pd-router"))
        .isEqualTo(2);
    assertThat(out())
        .contains(
            "kvguard has read SGLang's max_req_input_len formula for releases 0.5.16, 0.5.17, 0.5.18"
                + " only");
    assertThat(last().hits("/generate")).isZero();
  }

  @Test
  void rejectionProbeOptionsAreChecked() {
    assertUsageError(
        "--margin-tokens needs --rejection-probe",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--margin-tokens",
        "4");
    assertUsageError(
        "--pd-router needs --rejection-probe",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--pd-router");
    assertUsageError(
        "--margin-tokens must be between 1 and 1048576",
        "--engine",
        "sglang",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--rejection-probe",
        "--margin-tokens",
        "0");
    assertUsageError(
        "--rejection-probe on vllm needs --model",
        "--engine",
        "vllm",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--rejection-probe");
    assertUsageError(
        "--pd-router is for SGLang's prefill/decode router",
        "--engine",
        "tgi",
        "--url",
        "http://h:1",
        "--context-window",
        "1",
        "--rejection-probe",
        "--pd-router");
  }
}

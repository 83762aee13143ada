package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeProofRouter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code check --pd-router --register-prefill URL --register-decode URL} against {@link
 * FakeProofRouter} (sgl-model-gateway v0.5.18's worker API and PD routing) with fake SGLang prefill
 * and decode servers behind it, which refuse any prompt without the router's bootstrap fields, as
 * SGLang does, and answer a routed one as SGLang's checks do: the same proof as the operator's
 * registerWorkers (ProofRouterIT), its workers added and removed again, each reported.
 */
class CheckProofRouterTest {
  private static final long WINDOW = 1_048_576;
  private static final long POOL = 2_040_000;

  /** max_req_input_len of every worker: min(C − 1, P − 1) − 5. */
  private static final long M = WINDOW - 6;

  private static final String LEAK = "CUSTOMER-B invoice 4471 for ACME Corp, card ending 0099";

  /** A build with the fix: prefill's scheduler refuses the band prompt. */
  private static final Function<byte[], FakeEngine.Answer> REFUSES_BOTH =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.refusesBand(n, M));

  /** The incident: the band prompt's abort is lost on transfer, and decode answers 200. */
  private static final Function<byte[], FakeEngine.Answer> ANSWERS_BAND =
      EngineShapes.sglangGenerate(WINDOW, M, n -> EngineShapes.answersOverLong(LEAK));

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The engines' token, which is also the proof router's --api-key. */
  private static final String TOKEN = "engine-bearer-51c7e0a2";

  @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp;

  private final List<FakeEngine> engines = new ArrayList<>();
  private final FakeProofRouter router = newRouter();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private static FakeProofRouter newRouter() {
    try {
      return new FakeProofRouter().withApiKey(TOKEN);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void close() {
    router.close();
    engines.forEach(FakeEngine::close);
  }

  /** A prefill or decode SGLang server at 0.5.22 whose pool holds the window. */
  private String worker(String mode, Function<byte[], FakeEngine.Answer> routed)
      throws IOException {
    return worker(mode, POOL, routed);
  }

  private String worker(String mode, long pool, Function<byte[], FakeEngine.Answer> routed)
      throws IOException {
    FakeEngine.Answer noBootstrap =
        EngineFixtures.answer("sglang-0.5.18/generate-400-no-bootstrap-room.http");
    FakeEngine engine = new FakeEngine().serve(EngineShapes.sglang(WINDOW, mode, "0.5.22", pool));
    engine.answerBy("/generate", body -> bootstrapped(body) ? routed.apply(body) : noBootstrap);
    engines.add(engine);
    return "http://127.0.0.1:" + engine.port();
  }

  /** Whether the router added its bootstrap fields (it puts them first). */
  private static boolean bootstrapped(byte[] body) {
    String head = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8);
    return head.contains("\"bootstrap_room\":");
  }

  private String routerUrl() {
    return "http://127.0.0.1:" + router.port();
  }

  /** The check against the router, {@code extra} after its --rejection-probe --pd-router. */
  private int check(String... extra) {
    return checkAt(routerUrl(), extra);
  }

  /** The check against the router at {@code url}, with the engines' token in a key file. */
  private int checkAt(String url, String... extra) {
    java.nio.file.Path key = tmp.resolve("engine-token");
    try {
      java.nio.file.Files.writeString(key, TOKEN);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return run(
        concat(
            new String[] {
              "--engine",
              "sglang",
              "--url",
              url,
              "--api-key-file",
              key.toString(),
              "--context-window",
              String.valueOf(WINDOW),
              "--rejection-probe",
              "--pd-router"
            },
            extra));
  }

  private int run(String... args) {
    return new CheckCommand(EngineProbes.standard(EngineHttp.createDefault()))
        .run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String prefill;
  private String decode;

  /** One prefill and one decode server, both answering routed prompts with {@code routed}. */
  private void fleet(Function<byte[], FakeEngine.Answer> routed) throws IOException {
    prefill = worker("prefill", routed);
    decode = worker("decode", routed);
  }

  /** The check with both workers registered, as JSON. */
  private int proveJson(String... extra) {
    return check(
        concat(
            new String[] {
              "--register-prefill", prefill, "--register-decode", decode, "--output", "json"
            },
            extra));
  }

  private JsonNode json() throws IOException {
    return JSON.readTree(out.toString(StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private long promptsReachingEngines() {
    return engines.stream().mapToLong(e -> e.hits("/generate")).sum();
  }

  @Test
  void aRefusingRouteIsVerifiedWithExitZeroAndTheWorkersAreRemoved() throws IOException {
    fleet(REFUSES_BOTH);

    int exit = proveJson();

    JsonNode report = json();
    assertThat(exit).as(out()).isZero();
    assertThat(report.get("reason").asText()).isEqualTo("PoolSufficient");
    assertThat(report.get("message").asText())
        .contains("the pools of 1 prefill and 1 decode workers passed")
        .contains("refused 1048570 tokens with HTTP 400 as validate_input_length");
    assertThat(report.at("/rejectionProbe/result").asText()).isEqualTo("refused");
    assertThat(report.get("poolTokens").isNull()).isTrue();
    JsonNode workers = report.get("workers");
    assertThat(workers).hasSize(2);
    assertThat(workers.get(0).get("type").asText()).isEqualTo("prefill");
    assertThat(workers.get(0).get("url").asText()).isEqualTo(prefill);
    assertThat(workers.get(1).get("url").asText()).isEqualTo(decode);
    for (JsonNode worker : workers) {
      assertThat(worker.get("verdict").asText()).isEqualTo("Verified");
      assertThat(worker.get("poolTokens").asLong()).isEqualTo(POOL);
      assertThat(worker.get("workerId").asText()).hasSize(36);
      assertThat(worker.get("registration").asText()).isEqualTo("registered");
      assertThat(worker.get("removal").asText()).isEqualTo("removed");
      assertThat(worker.get("removalProblem").isNull()).isTrue();
    }
    // Both workers were on the router when the first prompt came, and neither is left.
    assertThat(router.workersAtFirstGenerate()).isEqualTo(2);
    assertThat(router.added()).isEqualTo(2);
    assertThat(router.removed()).isEqualTo(2);
    assertThat(router.workers()).isZero();
    // S1 and one band prompt (one prefill worker), each with the router's bootstrap fields.
    assertThat(router.generated()).isEqualTo(2);
    assertThat(out()).doesNotContain(EngineShapes.SECRET_API_KEY);
  }

  @Test
  void aBandPromptAnsweredWith200IsRefusedWithExitOneAndTheWorkersAreRemoved() throws IOException {
    fleet(ANSWERS_BAND);

    int exit = check("--register-prefill", prefill, "--register-decode", decode);

    assertThat(exit).as(out()).isEqualTo(1);
    assertThat(out())
        .contains(
            "engine          sglang, through the proof router at " + routerUrl(),
            "Refused (RejectionPathUnsafe)",
            "was answered with HTTP 200",
            "worker          prefill " + prefill + ": pool Verified (PoolSufficient, KV pool",
            "worker          decode " + decode + ": pool Verified",
            "; removal: removed",
            "(exit 1)")
        .doesNotContain(LEAK);
    assertThat(out().split("registered as worker ", -1)).hasSize(3);
    assertThat(router.workers()).isZero();
    assertThat(router.removed()).isEqualTo(router.added()).isEqualTo(2);
  }

  @Test
  void aRefusedRegistrationIsInconclusiveWithExitTwoAndLeavesNoWorker() throws IOException {
    router.refuseRegistrations();
    fleet(REFUSES_BOTH);

    int exit = proveJson();

    JsonNode report = json();
    assertThat(exit).isEqualTo(2);
    assertThat(report.get("reason").asText()).isEqualTo("RejectionProbeInconclusive");
    assertThat(report.get("message").asText())
        .contains("could not be added to the proof router")
        .contains("must reach the pod's /health and /server_info at " + prefill);
    JsonNode first = report.at("/workers/0");
    assertThat(first.get("registration").asText()).isEqualTo("refused");
    assertThat(first.get("registrationProblem").asText()).contains("failed");
    // The router reserved an ID for the URL; it is removed like any other.
    assertThat(first.get("removal").asText()).isEqualTo("removed");
    assertThat(router.workers()).isZero();
    assertThat(router.generated()).isZero();
    assertThat(promptsReachingEngines()).isZero();
  }

  @Test
  void aWorkerAlreadyOnTheRouterAtThatUrlIsNeverRemoved() throws IOException {
    fleet(REFUSES_BOTH);
    router.withWorker(prefill, "prefill");

    int exit = proveJson();

    JsonNode report = json();
    assertThat(exit).isEqualTo(2);
    assertThat(report.get("reason").asText()).isEqualTo("RejectionProbeInconclusive");
    assertThat(report.get("message").asText()).contains("kvguard did not add").contains(prefill);
    for (JsonNode worker : report.get("workers")) {
      assertThat(worker.get("registration").asText()).isEqualTo("not sent");
      assertThat(worker.get("removal").asText()).isEqualTo("none");
    }
    assertThat(router.lists(prefill)).isTrue();
    assertThat(router.added()).isZero();
    assertThat(router.removed()).isZero();
    assertThat(router.generated()).isZero();
  }

  /**
   * Someone adds the prefill server between the check's listing and its POST: the router answers
   * with that worker's ID. The check did not add it and leaves it; the decode worker it did add is
   * removed.
   */
  @Test
  void aWorkerAddedAtThatUrlDuringTheCheckIsLeftAlone() throws IOException {
    fleet(REFUSES_BOTH);
    router.withWorkerAddedBeforeThePostFor(prefill, "prefill");

    int exit = proveJson();

    JsonNode report = json();
    assertThat(exit).isEqualTo(2);
    assertThat(report.at("/workers/0/registration").asText()).isEqualTo("already on the router");
    assertThat(report.at("/workers/0/removal").asText()).isEqualTo("left alone");
    assertThat(report.at("/workers/1/removal").asText()).isEqualTo("removed");
    assertThat(router.lists(prefill)).isTrue();
    assertThat(router.generated()).isZero();
  }

  /** A registration the router has not finished by the deadline: no answer, and still removed. */
  @Test
  void aRegistrationStillRunningAtTheDeadlineFailsWithExitTwoAndIsRemoved() throws IOException {
    router.holdRegistrations();
    fleet(REFUSES_BOTH);

    int exit = proveJson("--timeout-seconds", "1");

    JsonNode report = json();
    assertThat(exit).isEqualTo(2);
    assertThat(report.get("reason").asText()).isEqualTo("ProbeFailed");
    assertThat(report.get("message").asText()).contains("timed out");
    for (JsonNode worker : report.get("workers")) {
      assertThat(worker.get("registration").asText()).isEqualTo("pending");
      assertThat(worker.get("removal").asText()).isEqualTo("removed");
    }
    assertThat(router.generated()).isZero();
  }

  /**
   * A proof router started without --api-key: its worker API is open to anyone who reaches it, so
   * the check refuses it as the operator does (RouterWorkers), adding and sending nothing.
   */
  @Test
  void aProofRouterWhoseWorkerApiAnswersWithoutAKeyIsInconclusiveAndGetsNothing()
      throws IOException {
    fleet(REFUSES_BOTH);
    try (FakeProofRouter open = new FakeProofRouter()) {
      int exit =
          checkAt(
              "http://127.0.0.1:" + open.port(),
              "--register-prefill",
              prefill,
              "--register-decode",
              decode,
              "--output",
              "json");

      JsonNode report = json();
      assertThat(exit).isEqualTo(2);
      assertThat(report.get("reason").asText()).isEqualTo("RejectionProbeInconclusive");
      assertThat(report.get("message").asText())
          .contains("GET /workers without a key answered HTTP 200")
          .contains("--api-key");
      assertThat(open.added()).isZero();
      assertThat(open.generated()).isZero();
    }
    assertThat(promptsReachingEngines()).isZero();
  }

  @Test
  void aWorkerWhosePoolFailsIsNamedAndNothingIsAdded() throws IOException {
    prefill = worker("prefill", 681_280, REFUSES_BOTH);
    decode = worker("decode", REFUSES_BOTH);

    int exit = check("--register-prefill", prefill, "--register-decode", decode);

    assertThat(exit).isEqualTo(1);
    assertThat(out())
        .contains(
            "Refused (PoolTooSmall)",
            "prefill worker " + prefill + " (--register-prefill): KV pool 681280 tokens",
            "rejection       not run (a worker cannot be part of the proof: see message)",
            "; not sent; removal: none");
    assertThat(router.added()).isZero();
    assertThat(router.generated()).isZero();
  }

  @Test
  void aServerOfAnotherModeThanItsFlagIsInconclusiveAndNothingIsAdded() throws IOException {
    decode = worker("decode", REFUSES_BOTH);
    String another = worker("decode", REFUSES_BOTH);

    int exit = check("--register-prefill", another, "--register-decode", decode);

    assertThat(exit).isEqualTo(2);
    assertThat(out())
        .contains(
            "Unknown (RejectionProbeInconclusive)",
            "prefill worker "
                + another
                + " (--register-prefill): the engine reports disaggregation mode decode, not"
                + " prefill");
    assertThat(router.added()).isZero();
  }

  @Test
  void registrationOptionsAreChecked() {
    assertUsageError(
        "--register-prefill needs --pd-router",
        "--rejection-probe",
        "--register-prefill",
        "http://p:1",
        "--register-decode",
        "http://d:1");
    assertUsageError("--register-decode needs --pd-router", "--register-decode", "http://d:1");
    String[] pdRouter = {"--rejection-probe", "--pd-router"};
    assertUsageError(
        "--register-prefill and --register-decode go together",
        concat(pdRouter, "--register-prefill", "http://p:1", "--register-prefill", "http://p:2"));
    assertUsageError(
        "--register-decode must be the engine's root",
        concat(pdRouter, "--register-prefill", "http://p:1", "--register-decode", "http://d:1/x"));
    assertUsageError(
        "--register-decode http://p:1 is named twice",
        concat(pdRouter, "--register-prefill", "http://p:1", "--register-decode", "http://p:1"));
    assertUsageError(
        "--register-prefill http://h:1 is named twice (or is --url, the router)",
        concat(pdRouter, "--register-prefill", "http://h:1", "--register-decode", "http://d:1"));
    // Only these two repeat.
    assertUsageError("--url given twice", "--url", "http://h:2");
  }

  private static String[] concat(String[] first, String... then) {
    List<String> all = new ArrayList<>(List.of(first));
    all.addAll(List.of(then));
    return all.toArray(String[]::new);
  }

  /** {@code extra} after --engine sglang --url http://h:1 --context-window 1. */
  private void assertUsageError(String message, String... extra) {
    out.reset();
    err.reset();
    String[] args =
        concat(
            new String[] {"--engine", "sglang", "--url", "http://h:1", "--context-window", "1"},
            extra);
    assertThat(run(args)).as(String.join(" ", args)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .as(String.join(" ", args))
        .contains("kvguard check: " + message)
        .contains("Usage:");
    assertThat(out()).isEmpty();
    assertThat(router.added()).isZero();
  }
}

package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SGLang as v0.5.18 serves it (fixtures in engines/sglang-0.5.18, from its source): decode context
 * parallelism, the Rust front end's /server_info and its refusals.
 */
class SglangNewestReleasesTest {
  /** The context length of the fixtures, and the window the role promises. */
  private static final long CONTEXT = 1_048_576;

  /** The per-rank token_capacity of the --dcp-size 2 fixture. */
  private static final long PER_RANK = 524_800;

  private static String fixtureBody(String name) {
    return new String(
        EngineFixtures.answer("sglang-0.5.18/" + name).body(), StandardCharsets.UTF_8);
  }

  private static ProbeOutcome probe(String serverInfo) {
    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("/server_info", Answer.json(serverInfo));
    answers.put("/v1/models", EngineShapes.models(CONTEXT));
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new SglangProbe(fake.http));
    }
  }

  private static String dcp(String version, String dcpSize) {
    return fixtureBody("server-info-dcp2-200.http")
        .replace("\"version\":\"0.5.18\"", "\"version\":\"" + version + "\"")
        .replace("\"dcp_size\":2,", dcpSize == null ? "" : "\"dcp_size\":" + dcpSize + ",");
  }

  @Test
  void dcpTwoAtV0518IsJudgedAsThePoolTimesDcpTheWayTheSchedulerAdmits() {
    ProbeOutcome outcome = probe(fixtureBody("server-info-dcp2-200.http"));

    PoolObservation seen = observed(outcome);
    // 524,800 per rank × dcp 2 = 1,049,600; the scheduler's own limit in the same answer is
    // min(1,048,575, 1,049,599) − 5 = 1,048,570, which the pool × dcp reproduces.
    assertThat(seen.poolTokens()).isEqualTo(2 * PER_RANK);
    assertThat(Math.min(CONTEXT - 1, seen.poolTokens() - 1) - 5).isEqualTo(1_048_570);
    assertThat(seen.notes())
        .contains(
            "pool = per-rank token_capacity 524800 × dcp_size 2: SGLang 0.5.17 and later admit"
                + " against the pool × attn_dcp_size");
    assertThat(judge(Engine.SGLANG, CONTEXT, outcome).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }

  @ParameterizedTest(name = "version {0}: judged per rank")
  @CsvSource({"0.5.16", "0.0.0.dev1+gbb737d7a8"})
  void beforeV0517OrForAnUnknownBuildTheSameAnswerIsJudgedPerRank(String version) {
    ProbeOutcome outcome = probe(dcp(version, "2"));

    assertThat(observed(outcome).poolTokens()).isEqualTo(PER_RANK);
    assertThat(observed(outcome).notes())
        .anySatisfy(note -> assertThat(note).startsWith("dcp_size 2: pool judged per rank"));
    assertThat(judge(Engine.SGLANG, CONTEXT, outcome).reason()).isEqualTo(GateReason.PoolTooSmall);
  }

  @ParameterizedTest(name = "dcp_size {0} fails closed")
  @CsvSource(
      delimiter = '|',
      value = {
        "0        | server_info.dcp_size",
        "-2       | server_info.dcp_size",
        "2.5      | server_info.dcp_size",
        "'\"2\"'  | server_info.dcp_size",
        "         | server_info reports no dcp_size, which SGLang 0.5.15 and later report"
      })
  void aMissingOrGarbageDcpSizeFailsClosedNamingIt(String dcpSize, String named) {
    assertThat(failure(probe(dcp("0.5.18", dcpSize)))).contains(named);
  }

  @Test
  void aPoolTimesDcpThatOverflowsFailsClosed() {
    String huge =
        dcp("0.5.18", "4")
            .replace("\"token_capacity\":524800", "\"token_capacity\":4611686018427387904");

    assertThat(failure(probe(huge)))
        .isEqualTo("server_info token_capacity 4611686018427387904 × dcp_size 4 overflows");
  }

  @ParameterizedTest(name = "dcp_size {0} with tp_size {1} fails closed")
  @CsvSource(
      delimiter = '|',
      value = {
        // SGLang cuts each tensor-parallel group into groups of dcp_size ranks and asserts each
        // has dcp_size ranks (parallel_state.py initialize_model_parallel, v0.5.18): a dcp_size
        // above or not dividing tp_size never starts, and would multiply the pool
        "16 | 8    | dcp_size 16 does not divide tp_size 8",
        "3  | 8    | dcp_size 3 does not divide tp_size 8",
        "2  |      | server_info reports dcp_size 2 but no tp_size"
      })
  void aDcpSizeNoSglangStartsWithFailsClosedInsteadOfMultiplyingThePool(
      String dcpSize, String tpSize, String named) {
    String answer =
        dcp("0.5.18", dcpSize)
            .replace("\"tp_size\":8,", tpSize == null ? "" : "\"tp_size\":" + tpSize + ",");

    assertThat(failure(probe(answer))).contains(named);
  }

  @Test
  void aDcpSizeThatDividesTpSizeIsJudgedAsThePoolTimesDcp() {
    assertThat(observed(probe(dcp("0.5.18", "8"))).poolTokens()).isEqualTo(8 * PER_RANK);
  }

  @Test
  void theRustFrontEndKeepsThePodShutNamingItAndWhatToChange() {
    ProbeOutcome outcome = probe(fixtureBody("server-info-rust-200.http"));

    assertThat(failure(outcome)).isEqualTo(SglangProbe.RUST_FRONT_END);
    assertThat(failure(outcome))
        .contains("SGLang's Rust front end")
        .contains("Run the engine without SGLANG_RUST_SERVER");
    assertThat(judge(Engine.SGLANG, CONTEXT, outcome).reason()).isEqualTo(GateReason.ProbeFailed);
  }

  @Test
  void aMissingMaxModelLenNamesTheReleaseThatServesIt() {
    Map<String, Answer> answers =
        new LinkedHashMap<>(EngineShapes.sglang(CONTEXT, null, "0.4.4", 2_040_000));
    answers.put("/v1/models", Answer.json("{\"object\":\"list\",\"data\":[{\"id\":\"m\"}]}"));
    try (Probing fake = new Probing(answers)) {
      assertThat(failure(fake.probe(new SglangProbe(fake.http))))
          .isEqualTo(
              "/v1/models reports no max_model_len (SGLang reports it from 0.4.4.post3): the"
                  + " engine's own context length is unknown");
    }
  }

  /** The S1 prompt (N = C − R, R = 0) to an engine whose context is 1,048,576 tokens. */
  private static Optional<String> refusal(String body) {
    PoolObservation pod =
        new PoolObservation(2_040_000, OptionalLong.of(1_048_576), "0.5.18", null, List.of());
    SglangRejection sglang = new SglangRejection();
    OverLimitPrompt sent =
        ((EngineRejection.Plan.Send) sglang.plan(1_048_576, "m", pod, EngineRejection.Route.POD))
            .prompt();
    return sglang.refusal(
        new EngineResponse(
            "/generate", 400, "application/json", body.getBytes(StandardCharsets.UTF_8)),
        sent,
        pod);
  }

  @Test
  void theRustFrontEndsTokenizerRefusalIsTheEnginesOwn() {
    String body = fixtureBody("generate-400-rust-context-length.http");

    assertThat(refusal(body)).contains("context-length check");
    assertThat(
            refusal(
                "{\"error\":{\"message\":\"validation failed: Requested token count exceeds the"
                    + " model's maximum context length of 1048576 tokens. You requested a total of"
                    + " 1048578 tokens: 1048577 tokens from the input messages and 1 tokens for the"
                    + " completion. Please reduce the number of tokens in the input messages or the"
                    + " completion to fit within the limit.\",\"code\":400}}"))
        .contains("total-token check");
  }

  @ParameterizedTest(name = "not the Rust front end''s refusal: {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // the prefix without the code its error_value always carries
        "{\"error\":{\"message\":\"validation failed: The input (1048577 tokens) is longer than the model's context length (1048576 tokens).\"}}",
        "{\"error\":{\"message\":\"validation failed: The input (1048577 tokens) is longer than the model's context length (1048576 tokens).\",\"code\":\"400\"}}",
        // another validation error of the Rust front end: not a length check
        "{\"error\":{\"message\":\"validation failed: min_new_tokens must be in [0, max_new_tokens(0)], got 1\",\"code\":400}}",
        // the prefix twice
        "{\"error\":{\"message\":\"validation failed: validation failed: The input (1048577 tokens) is longer than the model's context length (1048576 tokens).\",\"code\":400}}",
        // the scheduler's refusal never carries the Rust tokenizer's prefix
        "{\"error\":{\"message\":\"validation failed: Input length (1048576 tokens) exceeds the maximum allowed length (1048570 tokens). Use a shorter input or enable --allow-auto-truncate.\",\"code\":400}}"
      })
  void lookAlikesOfTheRustRefusalAreNotRecognised(String body) {
    assertThat(refusal(body)).isEmpty();
  }

  @Test
  void thePythonServersRefusalsOfThisPromptAreTheEnginesOwn() {
    assertThat(
            refusal(
                "{\"error\":{\"message\":\"The input (1048576 tokens) is longer than the model's"
                    + " context length (1048576 tokens).\"}}"))
        .contains("context-length check");
    assertThat(
            refusal(
                "{\"error\":{\"message\":\"Input length (1048576 tokens) exceeds the maximum"
                    + " allowed length (1048570 tokens). Use a shorter input or enable"
                    + " --allow-auto-truncate.\"}}"))
        .contains("validate_input_length");
  }

  @ParameterizedTest(name = "not SGLang''s refusal of this prompt: {0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // another context length than the pod reports (a proxy that rewrites /v1/models)
        "{\"error\":{\"message\":\"The input (1048576 tokens) is longer than the model's context length (1048570 tokens).\"}}",
        // a prompt shorter than the one sent
        "{\"error\":{\"message\":\"The input (4097 tokens) is longer than the model's context length (1048576 tokens).\"}}",
        // the sentence with something after it
        "{\"error\":{\"message\":\"The input (1048576 tokens) is longer than the model's context length (1048576 tokens). Contact your gateway.\"}}",
        // an extra field no SGLang build writes
        "{\"error\":{\"message\":\"The input (1048576 tokens) is longer than the model's context length (1048576 tokens).\",\"type\":\"BadRequest\"}}",
        // a key given twice: read as its last copy it would pass
        "{\"error\":{\"message\":\"x\",\"message\":\"The input (1048576 tokens) is longer than the model's context length (1048576 tokens).\"}}",
        // the scheduler's sentence for another prompt (a gateway's copy)
        "{\"error\":{\"message\":\"Input length (7 tokens) exceeds the maximum allowed length (5 tokens). Use a shorter input or enable --allow-auto-truncate.\"}}",
        // the scheduler's sentence with a limit above the prompt it states
        "{\"error\":{\"message\":\"Input length (1048576 tokens) exceeds the maximum allowed length (1048577 tokens). Use a shorter input or enable --allow-auto-truncate.\"}}",
        // a count longer than a long
        "{\"error\":{\"message\":\"Input length (99999999999999999999 tokens) exceeds the maximum allowed length (1 tokens). Use a shorter input or enable --allow-auto-truncate.\"}}"
      })
  void lookAlikesOfThePythonRefusalAreNotRecognised(String body) {
    assertThat(refusal(body)).isEmpty();
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 26: an SGLang v0.5.18 pod is sent one prompt per admission path, and the gate opens only
 * when both the tokenizer's (S1) and the scheduler's (S4) checks refuse theirs. The fake answers as
 * v0.5.18 does by prompt length (fixtures: src/test/resources/engines/sglang-0.5.18).
 */
class SglangAdmissionPathsTest {
  private static final long CONTEXT = 1_048_576;
  private static final long POOL = 2_040_000;
  private static final long LIMIT = CONTEXT - 6; // min(C − 1, P − 1) − 5
  private static final EngineHttp HTTP = EngineHttp.createDefault();
  private static final PoolObservation OBSERVED =
      new PoolObservation(POOL, OptionalLong.of(CONTEXT), "0.5.18", null, List.of());

  private static final PoolVerdict POOL_OK =
      new PoolVerdict(Verdict.Verified, GateReason.PoolSufficient, "pool ok");
  private final FakeEngine engine;

  SglangAdmissionPathsTest() throws IOException {
    engine = new FakeEngine();
    engine.serve(EngineShapes.sglang(CONTEXT, null, "0.5.18", POOL));
  }

  @AfterEach
  void stop() {
    engine.close();
  }

  private RejectionOutcome probe() {
    return new RejectionProbe(HTTP)
        .send(
            new SglangProbe(HTTP).rejection(),
            "sglang",
            EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(10)),
            CONTEXT + 1,
            "m",
            OBSERVED,
            EngineRejection.Route.POD);
  }

  @Test
  void anEngineThatRefusesOverContextButAnswersTheBandIsRejectionPathUnsafe() {
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(CONTEXT, LIMIT, n -> EngineShapes.answersOverLong("LEAK")));

    RejectionOutcome outcome = probe();
    PoolVerdict verdict = RejectionJudge.judge(POOL_OK, outcome);

    assertThat(outcome)
        .isInstanceOfSatisfying(
            RejectionOutcome.Answered.class,
            a -> {
              assertThat(a.promptTokens()).isEqualTo(LIMIT);
              assertThat(a.status()).isEqualTo(200);
            });
    assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
    assertThat(verdict.reason()).isEqualTo(GateReason.RejectionPathUnsafe);
    assertThat(verdict.message())
        .contains("a 1048570-token prompt", "S4 scheduler validate_input_length", "HTTP 200")
        .doesNotContain("LEAK");
    assertThat(engine.hits("/generate")).isEqualTo(2);
  }

  @Test
  void anEngineThatRefusesBothPathsIsVerified() {
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(CONTEXT, LIMIT, n -> EngineShapes.refusesBand(n, LIMIT)));

    RejectionOutcome outcome = probe();
    PoolVerdict verdict = RejectionJudge.judge(POOL_OK, outcome);

    assertThat(verdict.verified()).isTrue();
    assertThat(verdict.message())
        .contains(
            "S1 tokenizer context-length check refused 1048576 tokens with HTTP 400 as context-length check",
            "S4 scheduler validate_input_length (max_req_input_len) refused 1048570 tokens with HTTP 400"
                + " as validate_input_length");
    // The record of it carries over an operator restart; one from a single-prompt kvguard does not.
    RejectionOutcome.Refused refused = (RejectionOutcome.Refused) outcome;
    EngineRejection sglang = new SglangProbe(HTTP).rejection().orElseThrow();
    assertThat(sglang.recognises(refused.status(), refused.errorClass(), OBSERVED)).isTrue();
    assertThat(sglang.recognises(400, "context-length check", OBSERVED)).isFalse();
  }

  @Test
  void aBandPromptRefusedByTheContextCheckProvesNothing() {
    // An engine whose real context is lower than it reports: the band prompt never reaches S4.
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(LIMIT, LIMIT, n -> EngineShapes.answersOverLong("x")));

    assertThat(probe())
        .isInstanceOfSatisfying(
            RejectionOutcome.Inconclusive.class,
            i ->
                assertThat(i.cause())
                    .contains(
                        "it states a context length of 1048570 tokens, and the pod reports"
                            + " max_model_len 1048576"));
  }

  /**
   * A proxy that reports a context six tokens above the engine's and an EAGLE reserve of six: the
   * band M ≤ N &lt; C − R it reports is empty, so only the S1 prompt (1,048,576 tokens) is sent,
   * and the real engine (C = 1,048,576, R = 0, M = 1,048,570) refuses it with its own
   * context-length sentence, which states the engine's context, not the reported one. The real band
   * (1,048,570 to 1,048,575 tokens, answered with HTTP 200 here) is never probed: the refusal's
   * numbers must be this probe's.
   */
  @Test
  void aRefusalStatingAnotherContextThanReportedProvesNothing() {
    long reported = CONTEXT + 6;
    engine.answer(
        "/server_info",
        FakeEngine.Answer.json(
            "{\"context_length\":"
                + reported
                + ",\"disaggregation_mode\":\"null\",\"dp_size\":1,\"dcp_size\":1,"
                + "\"max_total_num_tokens\":"
                + POOL
                + ",\"max_req_input_len\":"
                + CONTEXT
                + ",\"allow_auto_truncate\":false,\"speculative_algorithm\":\"EAGLE\","
                + "\"speculative_adaptive\":false,\"speculative_eagle_topk\":1,"
                + "\"speculative_num_steps\":6,\"speculative_num_draft_tokens\":6,"
                + "\"version\":\"0.5.18\"}"));
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(CONTEXT, LIMIT, n -> EngineShapes.answersOverLong("LEAK")));

    RejectionOutcome outcome =
        new RejectionProbe(HTTP)
            .send(
                new SglangProbe(HTTP).rejection(),
                "sglang",
                EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(10)),
                reported + 1,
                "m",
                new PoolObservation(POOL, OptionalLong.of(reported), "0.5.18", null, List.of()),
                EngineRejection.Route.POD);

    assertThat(outcome).isNotInstanceOf(RejectionOutcome.Refused.class);
    assertThat(RejectionJudge.judge(POOL_OK, outcome).verified()).isFalse();
  }

  /** A gateway's copy of the scheduler's sentence with numbers that are not this prompt's. */
  @Test
  void aSchedulerRefusalStatingAnotherPromptProvesNothing() {
    engine.answerBy(
        "/generate",
        EngineShapes.sglangGenerate(CONTEXT, LIMIT, n -> EngineShapes.refusesBand(7, 5)));

    assertThat(probe()).isInstanceOf(RejectionOutcome.Inconclusive.class);
  }
}

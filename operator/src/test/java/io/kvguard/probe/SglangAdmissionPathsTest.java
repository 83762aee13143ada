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
            new PoolObservation(POOL, OptionalLong.of(CONTEXT), "0.5.18", null, List.of()),
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
    assertThat(sglang.recognises(refused.status(), refused.errorClass())).isTrue();
    assertThat(sglang.recognises(400, "context-length check")).isFalse();
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
            i -> assertThat(i.cause()).contains("another check's refusal (context-length check)"));
  }
}

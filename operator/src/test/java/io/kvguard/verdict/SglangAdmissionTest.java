package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** SGLang's admission paths and the prompt lengths that reach them, as its source computes them. */
class SglangAdmissionTest {

  /**
   * 0.5.18 with C 1,048,576, M 1,048,570 and a non-adaptive EAGLE of {@code topk}, {@code steps}
   * and {@code draftTokens}.
   */
  private static SglangAdmission eagle(long topk, long steps, long draftTokens) {
    return new SglangAdmission(
        1_048_576,
        "0.5.18",
        OptionalLong.of(1_048_570),
        Optional.of(false),
        "EAGLE",
        Optional.of(false),
        OptionalLong.of(topk),
        OptionalLong.of(steps),
        OptionalLong.of(draftTokens),
        OptionalLong.of(1),
        OptionalLong.of(2_040_000));
  }

  private static SglangAdmission seen(String version, long context, long m, long pool, long dcp) {
    return new SglangAdmission(
        context,
        version,
        OptionalLong.of(m),
        Optional.of(false),
        null,
        Optional.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.of(dcp),
        OptionalLong.of(pool));
  }

  /**
   * M = min(C − 1, P × dcp − 1) − 5 (tp_worker.py: v0.5.16:482-492 without dcp, v0.5.17:509-513 and
   * v0.5.18:525-537 with it). Rows: the incident's prefill (C 1,048,576, P 681,280), its pool after
   * the fix (about 2.04 M), issue #30233's (P 284,928), and a DCP of 8.
   */
  @ParameterizedTest
  @CsvSource({
    "0.5.18, 1048576,  681280, 1,  681274",
    "0.5.18, 1048576, 2040000, 1, 1048570",
    "0.5.18, 1048576,  284928, 1,  284922",
    "0.5.18, 1048576,  131072, 8, 1048570",
    "0.5.18, 1048576,  100000, 8,  799994",
    "0.5.17, 1048576,  100000, 8,  799994",
    "0.5.16, 1048576,  100000, 8,   99994",
    "0.5.16, 1048576, 2040000, 1, 1048570"
  })
  void theSchedulerLimitIsComputedAsTheVersionsSourceComputesIt(
      String version, long context, long pool, long dcp, long m) {
    assertThat(SglangAdmission.formula(version, context, pool, dcp)).hasValue(m);
  }

  @ParameterizedTest
  @CsvSource({"0.5.15", "0.5.22", "0.5.18.post1", "main"})
  void aVersionWhoseFormulaWasNotReadHasNone(String version) {
    assertThat(SglangAdmission.formula(version, 1_048_576, 2_040_000, 1)).isEmpty();
  }

  @Test
  void theOverContextPromptAndTheBandPromptAreSentWithExactLengths() {
    AdmissionPlan plan = seen("0.5.18", 1_048_576, 1_048_570, 2_040_000, 1).paths();

    assertThat(plan)
        .isInstanceOfSatisfying(
            AdmissionPlan.Prompts.class,
            p -> {
              assertThat(p.prompts())
                  .extracting(ProbePrompt::tokens)
                  .containsExactly(1_048_576L, 1_048_570L);
              assertThat(p.prompts().get(0).refusedBy(SglangAdmission.CONTEXT_CHECK)).isTrue();
              assertThat(p.prompts().get(0).refusedBy(SglangAdmission.SCHEDULER_CHECK)).isFalse();
              assertThat(p.prompts().get(1).refusedBy(SglangAdmission.SCHEDULER_CHECK)).isTrue();
              assertThat(p.prompts().get(1).refusedBy(SglangAdmission.CONTEXT_CHECK)).isFalse();
            });
  }

  @Test
  void eagleReservedTokensLowerTheOverContextPrompt() {
    SglangAdmission eagle = eagle(4, 3, 8);

    // R = max(topk × steps, draft tokens) = max(12, 8) = 12 (managers/utils.py:380-399): C − R is
    // below M, so the tokenizer refuses every prompt the scheduler would and the band is empty.
    assertThat(((AdmissionPlan.Prompts) eagle.paths()).prompts())
        .extracting(ProbePrompt::tokens)
        .containsExactly(1_048_564L);
  }

  @Test
  void aSmallReservationLeavesABand() {
    SglangAdmission eagle = eagle(1, 3, 3);

    // R = 3: S1 at C − 3, S4 at M (M ≤ N < C − R).
    assertThat(((AdmissionPlan.Prompts) eagle.paths()).prompts())
        .extracting(ProbePrompt::tokens)
        .containsExactly(1_048_573L, 1_048_570L);
  }

  @Test
  void autoTruncateMakesRefusalProbingMeaningless() {
    SglangAdmission truncating =
        new SglangAdmission(
            1_048_576,
            "0.5.18",
            OptionalLong.of(1_048_570),
            Optional.of(true),
            null,
            Optional.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.of(1),
            OptionalLong.of(2_040_000));

    assertThat(truncating.paths())
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u ->
                assertThat(u.reason())
                    .contains(
                        "--allow-auto-truncate", "meaningless", "remove --allow-auto-truncate"));
  }

  @Test
  void aLimitAboveWhatTheVersionAllowsIsInconclusiveAndSaysWhy() {
    assertThat(seen("0.5.18", 1_048_576, 1_048_575, 2_040_000, 1).paths())
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u -> assertThat(u.reason()).contains("max_req_input_len 1048575", "1048570"));
  }

  @Test
  void aMissingLimitOrAnUnreadVersionIsInconclusive() {
    SglangAdmission missing =
        new SglangAdmission(
            1_048_576,
            "0.5.18",
            OptionalLong.empty(),
            Optional.of(false),
            null,
            Optional.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.empty(),
            OptionalLong.of(1),
            OptionalLong.of(2_040_000));
    assertThat(missing.paths()).isInstanceOf(AdmissionPlan.Unprovable.class);
    assertThat(seen("0.5.22", 1_048_576, 1_048_570, 2_040_000, 1).paths())
        .isInstanceOfSatisfying(
            AdmissionPlan.Unprovable.class,
            u -> assertThat(u.reason()).contains("0.5.16, 0.5.17, 0.5.18", "version 0.5.22"));
  }

  @Test
  void aBandAnswerIsRejectionPathUnsafeNamingTheCheck() {
    PoolVerdict pool = new PoolVerdict(Verdict.Verified, GateReason.PoolSufficient, "pool ok");
    PoolVerdict judged =
        RejectionJudge.judge(
            pool,
            new RejectionOutcome.Answered(
                200, 10, "0".repeat(64), 1_048_570, false, "", SglangAdmission.S4));
    assertThat(judged.reason()).isEqualTo(GateReason.RejectionPathUnsafe);
    assertThat(judged.message()).contains("S4 scheduler validate_input_length");
    assertThat(
            RejectionJudge.judge(
                    pool,
                    RejectionOutcome.Refused.ofPaths(
                        400,
                        List.of("S1 refused 1 tokens with HTTP 400 as context-length check"),
                        7))
                .verified())
        .isTrue();
  }
}

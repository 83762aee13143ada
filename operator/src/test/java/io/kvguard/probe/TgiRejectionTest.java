package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.verdict.PoolObservation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * TGI's refusal is recognised by its whole shape: each body below is what TGI's router writes
 * (huggingface/text-generation-inference v1.0.0 to v3.3.7, router/src/validation.rs) for kvguard's
 * probe (4,097 units of " a", max_new_tokens 1, max_total_tokens 4096), and each look-alike differs
 * from one of them in one respect.
 */
class TgiRejectionTest {
  private static final TgiRejection TGI = new TgiRejection();
  private static final long SENT = 4_097;
  private static final PoolObservation POD = maxTotal(4_096);
  private static final OverLimitPrompt PROMPT = prompt(SENT);

  /** MaxTotalTokens with a tokenizer that adds a BOS token: 4,098 tokens for 4,097 units. */
  static final String TOTAL =
      "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given:"
          + " 4098 `inputs` tokens and 1 `max_new_tokens`\",\"error_type\":\"validation\"}";

  private static PoolObservation maxTotal(long tokens) {
    return new PoolObservation(2_000_000, OptionalLong.of(tokens), "3.3.7", null, List.of());
  }

  private static OverLimitPrompt prompt(long units) {
    return ((EngineRejection.Plan.Send) TGI.plan(units, "m", POD, EngineRejection.Route.POD))
        .prompt();
  }

  private static EngineResponse answer(int status, String contentType, String body) {
    return new EngineResponse(
        "/generate", status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean refused(EngineResponse response) {
    return TGI.refusal(response, PROMPT, POD).isPresent();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // One token per unit, no special tokens.
        "a count of the units sent|4097",
        // A BOS token ahead of the text.
        "BOS|4098",
        // Every byte a token (a character-level tokenizer) and BOS and EOS.
        "every byte a token|8196",
      })
  void theMaxTotalTokensRefusalIsRecognisedForEachCountTheTextCanTokenizeTo(
      String tokenizer, long count) {
    EngineResponse response =
        answer(422, "application/json", TOTAL.replace("Given: 4098", "Given: " + count));

    assertThat(TGI.refusal(response, PROMPT, POD)).contains(TgiRejection.MAX_TOTAL_TOKENS_CLASS);
    assertThat(TGI.fixFor(response, PROMPT, POD)).isEmpty();
  }

  @Test
  void keysInAnotherOrderAreTheSameObject() {
    String reordered =
        "{\"error_type\":\"validation\",\"error\":\"Input validation error: `inputs` tokens +"
            + " `max_new_tokens` must be <= 4096. Given: 4098 `inputs` tokens and 1"
            + " `max_new_tokens`\"}";

    assertThat(refused(answer(422, "application/json", reordered))).isTrue();
  }

  @Test
  void theInputLengthRefusalIsRecognisedForAPromptTheTotalCheckLetThrough() {
    // max_input_tokens 3000 < max_total_tokens 4096: 3,500 units pass MaxTotalTokens (3501 + 1 <=
    // 4096) and meet InputLength.
    OverLimitPrompt band = prompt(3_500);
    String inputLength =
        "{\"error\":\"Input validation error: `inputs` must have less than 3000 tokens. Given:"
            + " 3501\",\"error_type\":\"validation\"}";

    PoolObservation withInput = POD.withEngineInputTokens(3_000);
    assertThat(TGI.refusal(answer(422, "application/json", inputLength), band, withInput))
        .contains(TgiRejection.INPUT_LENGTH_CLASS);
  }

  @Test
  void anInputLengthRefusalStatingAnotherLimitThanInfoIsNotTgis() {
    OverLimitPrompt band = prompt(3_500);
    String inputLength =
        "{\"error\":\"Input validation error: `inputs` must have less than 3000 tokens. Given:"
            + " 3501\",\"error_type\":\"validation\"}";
    PoolObservation otherInput = POD.withEngineInputTokens(3_200);

    EngineResponse response = answer(422, "application/json", inputLength);
    assertThat(TGI.refusal(response, band, otherInput)).isEmpty();
    assertThat(TGI.fixFor(response, band, otherInput).orElseThrow())
        .contains("the pod's /info reports max_input_tokens 3200");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "an input limit not below max_total_tokens|less than 3000|less than 4096|it states an input limit of 4096 tokens, not below the pod's max_total_tokens 4096",
        "a count within the input limit|Given: 3501|Given: 3000|it states a prompt of 3000 tokens, and kvguard sent 3500 units",
        "a count the total check would have refused|Given: 3501|Given: 4096|its prompt and max_new_tokens exceed max_total_tokens 4096, which TGI checks first",
      })
  void anInputLengthLookAlikeIsNotTgisRefusal(String what, String from, String to, String seen) {
    OverLimitPrompt band = prompt(3_500);
    String inputLength =
        "{\"error\":\"Input validation error: `inputs` must have less than 3000 tokens. Given:"
            + " 3501\",\"error_type\":\"validation\"}";
    EngineResponse response = answer(422, "application/json", inputLength.replace(from, to));

    assertThat(TGI.refusal(response, band, POD)).isEmpty();
    assertThat(TGI.fixFor(response, band, POD).orElseThrow())
        .startsWith("the JSON answer is not TGI's refusal of this prompt: " + seen);
  }

  @Test
  void anInputLengthRefusalOfTheOverContextPromptIsNotTgis() {
    // 4,097 units do not pass MaxTotalTokens, so TGI never answers them with InputLength.
    String inputLength =
        "{\"error\":\"Input validation error: `inputs` must have less than 3000 tokens. Given:"
            + " 4098\",\"error_type\":\"validation\"}";

    assertThat(refused(answer(422, "application/json", inputLength))).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another max_total_tokens|must be <= 4096|must be <= 131072|it states a limit of 131072 tokens, and the pod's /info reports max_total_tokens 4096",
        "a count below the units sent|Given: 4098|Given: 4000|it states a prompt of 4000 tokens, and kvguard sent 4097 units of text (8194 bytes)",
        "a count above the text's bytes|Given: 4098|Given: 9000|it states a prompt of 9000 tokens, and kvguard sent 4097 units",
        "other max_new_tokens|and 1 `max_new_tokens`|and 16 `max_new_tokens`|it states 16 max_new_tokens, and kvguard asked for 1",
        "a count with a leading zero|Given: 4098|Given: 04098|a number in the sentence is not a token count",
        "a number too large|Given: 4098|Given: 99999999999999999999|a number in the sentence is not a token count",
        "an extra field|\"error_type\":\"validation\"}|\"error_type\":\"validation\",\"details\":null}|its fields are not those TGI's ErrorResponse has",
        "OpenAI's envelope|{\"error\":\"|{\"message\":\"|its fields are not those TGI's ErrorResponse has",
        "another error_type|\"validation\"}|\"invalid_request_error\"}|its error_type is not validation",
        "a truncated sentence| and 1 `max_new_tokens`||its error is not one of TGI's length sentences, whole",
        "a sentence with a prefix|\"Input validation|\"Upstream: Input validation|its error is not one of TGI's length sentences, whole",
        "a sentence with a suffix|`max_new_tokens`\"|`max_new_tokens` [gateway]\"|its error is not one of TGI's length sentences, whole",
        "the sentence without TGI's prefix|Input validation error: ||its error is not one of TGI's length sentences, whole",
      })
  void aLookAlikeIsNotTgisRefusalAndTheReasonSaysWhatDiffered(
      String what, String from, String to, String seen) {
    String body = TOTAL.replace(from, to == null ? "" : to);
    assertThat(body).as("the look-alike differs").isNotEqualTo(TOTAL);
    EngineResponse response = answer(422, "application/json", body);

    assertThat(TGI.refusal(response, PROMPT, POD)).isEmpty();
    assertThat(TGI.fixFor(response, PROMPT, POD))
        .hasValueSatisfying(
            fix ->
                assertThat(fix)
                    .startsWith("the JSON answer is not TGI's refusal of this prompt: " + seen)
                    .doesNotContain("must be <=")
                    .doesNotContain("gateway]"));
  }

  @Test
  void aGatewayStatingTheLimitThePodReportsForAPromptThatFitsIsNotTgis() {
    // 4,000 units fit max_total_tokens 8192 with max_new_tokens 1: TGI admits them.
    OverLimitPrompt fits = prompt(4_000);
    String body = TOTAL.replace("<= 4096", "<= 8192").replace("Given: 4098", "Given: 4001");

    assertThat(TGI.refusal(answer(422, "application/json", body), fits, maxTotal(8_192))).isEmpty();
    assertThat(
            TGI.fixFor(answer(422, "application/json", body), fits, maxTotal(8_192)).orElseThrow())
        .contains("its prompt and max_new_tokens fit max_total_tokens, which TGI admits");
  }

  @Test
  void theRightBodyWithTheWrongStatusOrWrappingIsNotTgisRefusal() {
    assertThat(refused(answer(200, "application/json", TOTAL))).as("HTTP 200").isFalse();
    assertThat(refused(answer(400, "application/json", TOTAL))).as("HTTP 400").isFalse();
    assertThat(TGI.fixFor(answer(400, "application/json", TOTAL), PROMPT, POD).orElseThrow())
        .contains("it came with HTTP 400, and TGI answers validation errors with 422");
    RefusalLookAlikes.assertWrappedBodiesAreNotRefusals(
        TgiRejectionTest::refused,
        (type, body) -> answer(422, type, body),
        TOTAL,
        TOTAL.replace("{\"error\"", "{\"error_type\":\"x\",\"error\""),
        100);
  }

  @Test
  void withoutThePodsMaxTotalTokensNothingIsAttributed() {
    RefusalLookAlikes.assertNothingIsAttributedWithoutThePodsLimit(
        TGI,
        answer(422, "application/json", TOTAL),
        PROMPT,
        new PoolObservation(2_000_000, OptionalLong.empty(), "3.3.7", null, List.of()),
        "the pod reported no max_total_tokens");
  }

  @Test
  void aRefusalRecordedByThePrefixMatcherIsNotCarriedOver() {
    PoolObservation tgiDefault = POD.withEngineInputTokens(4_095);
    assertThat(TGI.recognises(422, "validation", tgiDefault)).isFalse();
    assertThat(TGI.recognises(422, TgiRejection.MAX_TOTAL_TOKENS_CLASS, tgiDefault))
        .as("the class of kvguard's single prompt, before issue 26")
        .isFalse();
    String t2 = pathRecord(TgiRejection.T2, 4_097, TgiRejection.MAX_TOTAL_TOKENS_CLASS);
    String t3 = pathRecord(TgiRejection.T3, 3_001, TgiRejection.INPUT_LENGTH_CLASS);
    assertThat(TGI.recognises(422, paths(t2), tgiDefault))
        .as("I = X - 1: T3 has no band, T2 alone is sent")
        .isTrue();
    assertThat(TGI.recognises(422, paths(t2, t3), tgiDefault)).isTrue();
    assertThat(TGI.recognises(422, paths(t3), tgiDefault)).as("T2 is always sent").isFalse();
    assertThat(TGI.recognises(400, paths(t2), tgiDefault)).isFalse();
  }

  @Test
  void aT2OnlyRecordDoesNotStandInWhereThePodsFiguresGiveT3ABand() {
    String t2 = pathRecord(TgiRejection.T2, 4_097, TgiRejection.MAX_TOTAL_TOKENS_CLASS);
    String t3 = pathRecord(TgiRejection.T3, 4_088, TgiRejection.INPUT_LENGTH_CLASS);
    // X - I = 9: builds before the second review of issue 26 sent T2 alone here.
    PoolObservation narrow = POD.withEngineInputTokens(4_087);
    assertThat(TGI.recognises(422, paths(t2), narrow))
        .as("T3 was never proven: the prompts are sent again")
        .isFalse();
    assertThat(TGI.recognises(422, paths(t2, t3), narrow)).isTrue();
    assertThat(TGI.recognises(422, paths(t2), POD))
        .as("figures carried over from the record (no max_input_tokens) until the next pool probe")
        .isTrue();
  }

  static String pathRecord(String check, long tokens, String errorClass) {
    return check + " refused " + tokens + " tokens with HTTP 422 as " + errorClass;
  }

  static String paths(String... refusals) {
    return io.kvguard.verdict.RejectionOutcome.Refused.ofPaths(422, List.of(refusals), 4_097)
        .errorClass();
  }

  @Test
  void t3IsSentOnlyWhereAPromptAskingForATokenLandsBetweenTheTwoLimits() {
    PoolObservation wide = POD.withEngineInputTokens(3_000);
    PoolObservation tgiDefault = POD.withEngineInputTokens(4_095);

    assertThat(checks(wide)).containsExactly(TgiRejection.T2 + "@4097", TgiRejection.T3 + "@3001");
    assertThat(checks(tgiDefault))
        .as("I = X - 1 (TGI's default): every prompt over I that asks for a token meets T2 first")
        .containsExactly(TgiRejection.T2 + "@4097");
    assertThat(TGI.paths(null, null, 4_097, POD, EngineRejection.Route.POD))
        .isInstanceOfSatisfying(
            io.kvguard.verdict.AdmissionPlan.Unprovable.class,
            u -> assertThat(u.reason()).contains("no max_input_tokens"));
  }

  @Test
  void t3IsSentWhereItsBandHoldsAPromptEvenIfTheSpecialTokensMayPushItIntoT2() {
    // X - I = 6: prompts of 4091 to 4095 tokens with max_new_tokens 1 pass T2 and meet T3 alone.
    // Not probing them opened the gate on T2 alone, for a build (or a proxy) that answers them;
    // sent, a count the special tokens push past X - 1 is T2's refusal: inconclusive, shut.
    PoolObservation narrow = POD.withEngineInputTokens(4_090);

    assertThat(checks(narrow))
        .containsExactly(TgiRejection.T2 + "@4097", TgiRejection.T3 + "@4091");
  }

  private static List<String> checks(PoolObservation seen) {
    return ((io.kvguard.verdict.AdmissionPlan.Prompts)
            TGI.paths(null, null, 4_097, seen, EngineRejection.Route.POD))
        .prompts().stream().map(p -> p.check() + "@" + p.tokens()).toList();
  }

  /** Issue 26 §4: TGI answers text, scanned for the marker's words. */
  @Test
  void anAnswersGeneratedTextIsWhatIsScannedForMarkers() {
    assertThat(
            TGI.answerContent(
                new EngineResponse(
                    "/generate",
                    200,
                    "application/json",
                    "{\"generated_text\":\" b c\"}".getBytes(StandardCharsets.UTF_8))))
        .isEqualTo(new io.kvguard.verdict.AnswerContent.Text(" b c"));
    assertThat(
            TGI.answerContent(
                new EngineResponse(
                    "/generate",
                    500,
                    "application/json",
                    "{\"error\":\"shard died\",\"error_type\":\"generation\"}"
                        .getBytes(StandardCharsets.UTF_8))))
        .isEqualTo(
            new io.kvguard.verdict.AnswerContent.Unreadable(
                "the answer has no generated_text, which TGI's /generate answers carry"));
  }
}

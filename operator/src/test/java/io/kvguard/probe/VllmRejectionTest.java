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
 * vLLM's refusal is recognised by its whole shape: each body below is what a vLLM version's own
 * source writes for kvguard's probe (a 4097-token prompt, max_tokens 1, max_model_len 4096), and
 * each look-alike differs from one of them in one respect.
 */
class VllmRejectionTest {
  private static final VllmRejection VLLM = new VllmRejection();
  private static final long SENT = 4_097;
  private static final PoolObservation POD =
      new PoolObservation(2_000_000, OptionalLong.of(4_096), "0.11.0", null, List.of());
  private static final OverLimitPrompt PROMPT =
      VLLM.plan(SENT, "m", POD, EngineRejection.Route.POD) instanceof EngineRejection.Plan.Send s
          ? s.prompt()
          : null;

  /** main at ffd91ee17a: renderers/params.py _token_len_check, error_response.py. */
  static final String CURRENT =
      "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, you"
          + " requested 1 output tokens and your prompt contains 4097 input tokens, for a total of 4098"
          + " tokens. Please reduce the length of the input prompt or the number of requested output"
          + " tokens. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\","
          + "\"param\":\"input_tokens\",\"code\":400}}";

  private static EngineResponse answer(int status, String contentType, String body) {
    return new EngineResponse(
        "/v1/completions", status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean refused(EngineResponse response) {
    return VLLM.refusal(response, PROMPT, POD).isPresent();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // serving_engine.py _validate_input at tags v0.3.2..v0.7.2, flat ErrorResponse.
        "v0.7.2|{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 4098 tokens (4097 in the messages, 1 in the completion). Please reduce the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}",
        // PR #22099 (2025-08-07): the OpenAI envelope, same sentence until PR #22803.
        "PR 22099|{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 4098 tokens (4097 in the messages, 1 in the completion). Please reduce the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
        // PR #22803 (2025-08-13): token_num >= max_model_len, stating max_model_len.
        "PR 22803|{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, your request has 4097 input tokens. Please reduce the length of the input messages.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
        // PR #24995 (2025-09-16): the renderer's check states max_model_len - max_tokens.
        "PR 24995|{\"error\":{\"message\":\"This model's maximum context length is 4095 tokens. However, your request has 4097 input tokens. Please reduce the length of the input messages.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
        // PR #30134 (2025-12-23): VLLMValidationError appends parameter and value.
        "PR 30134|{\"error\":{\"message\":\"This model's maximum context length is 4095 tokens. However, your request has 4097 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\",\"code\":400}}",
        // PR #32863 (2026-01-31): renderers/params.py.
        "PR 32863|{\"error\":{\"message\":\"You passed 4097 input tokens and requested 1 output tokens. However, the model's context length is only 4096, resulting in a maximum input length of 4095. Please reduce the length of the input messages. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\",\"code\":400}}",
        // PR #31366 (2026-02-06).
        "PR 31366|{\"error\":{\"message\":\"You passed 4097 input tokens and requested 1 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 4095 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\",\"param\":\"input_tokens\",\"code\":400}}",
        // PR #36197 (2026-03-05) to ffd91ee17a, keys in another order (JSON objects are unordered).
        "PR 36197|{\"error\":{\"code\":400,\"param\":\"input_tokens\",\"type\":\"BadRequestError\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 1 output tokens and your prompt contains 4097 input tokens, for a total of 4098 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=4097)\"}}",
      })
  void eachVersionsRefusalIsRecognised(String version, String body) {
    EngineResponse response = answer(400, "application/json", body);

    assertThat(VLLM.refusal(response, PROMPT, POD)).contains(VllmRejection.ERROR_CLASS);
    assertThat(VLLM.fixFor(response, PROMPT, POD)).isEmpty();
  }

  @Test
  void atLeastIsRecognisedOnlyWhereTheSourceWritesIt() {
    // "at least" when the count is exactly max_model_len - max_tokens + 1 (params.py: the tokenizer
    // stops there), so the prompt sent may be longer than the count: 4096 here.
    String atLeast4096 =
        CURRENT
            .replace("contains 4097", "contains at least 4096")
            .replace("total of 4098", "total of at least 4097")
            .replace("value=4097", "value=4096");
    assertThat(refused(answer(400, "application/json", atLeast4096))).isTrue();
    OverLimitPrompt prompt4096 =
        ((EngineRejection.Plan.Send) VLLM.plan(4_096, "m", POD, EngineRejection.Route.POD))
            .prompt();
    assertThat(VLLM.refusal(answer(400, "application/json", atLeast4096), prompt4096, POD))
        .isPresent();
    OverLimitPrompt prompt4095 =
        ((EngineRejection.Plan.Send) VLLM.plan(4_095, "m", POD, EngineRejection.Route.POD))
            .prompt();
    assertThat(VLLM.refusal(answer(400, "application/json", atLeast4096), prompt4095, POD))
        .as("at least more than was sent")
        .isEmpty();
    assertThat(
            refused(
                answer(
                    400,
                    "application/json",
                    CURRENT
                        .replace("contains 4097", "contains at least 4097")
                        .replace("total of 4098", "total of at least 4098"))))
        .as("at least 4097: vLLM qualifies only max_model_len - max_tokens + 1")
        .isFalse();
    assertThat(
            refused(
                answer(
                    400,
                    "application/json",
                    CURRENT.replace("contains 4097", "contains at least 4097"))))
        .as("one of the two counts qualified")
        .isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another context length|4096 tokens. However|8192 tokens. However|it states a context length of 8192 tokens, and the pod reports max_model_len 4096",
        "another prompt length|contains 4097 input|contains 4100 input|it states a prompt of 4100 tokens, and kvguard sent 4097",
        "other output tokens|requested 1 output|requested 16 output|it states 16 output tokens, and kvguard asked for 1",
        "a total that does not add up|total of 4098|total of 4099|its total is not the prompt plus the output tokens",
        "another value|value=4097|value=1|its value is not the prompt's length",
        "a number too large|contains 4097 input|contains 99999999999999999999 input|a number in the sentence is too large to be a token count",
        "an extra field|\"code\":400}}|\"code\":400,\"retryable\":false}}|its fields are not those vLLM's ErrorResponse has",
        "an extra top-level field|\"code\":400}}|\"code\":400},\"id\":\"x\"}|its fields are not those vLLM's ErrorResponse has",
        "OpenAI's type|BadRequestError|invalid_request_error|its type is not BadRequestError",
        "another param|\"param\":\"input_tokens\"|\"param\":\"messages\"|its param is not the one vLLM sends with that sentence",
        "a null param where vLLM names it|\"param\":\"input_tokens\"|\"param\":null|its param is not the one vLLM sends with that sentence",
        "a code as a string|\"code\":400|\"code\":\"400\"|its code is not the number 400",
        "a code as a fraction|\"code\":400|\"code\":400.0|its code is not the number 400",
        "a truncated sentence| (parameter=input_tokens, value=4097)||its message is not one of vLLM's prompt-length sentences, whole",
        "a sentence with a prefix|\"message\":\"This|\"message\":\"Upstream error: This|its message is not one of vLLM's prompt-length sentences, whole",
        "a sentence with a suffix|value=4097)|value=4097) [gateway]|its message is not one of vLLM's prompt-length sentences, whole",
      })
  void aLookAlikeIsNotVllmsRefusalAndTheReasonSaysWhatDiffered(
      String what, String from, String to, String seen) {
    String body = CURRENT.replace(from, to == null ? "" : to);
    assertThat(body).as("the look-alike differs").isNotEqualTo(CURRENT);
    EngineResponse response = answer(400, "application/json", body);

    assertThat(VLLM.refusal(response, PROMPT, POD)).isEmpty();
    assertThat(VLLM.fixFor(response, PROMPT, POD))
        .hasValueSatisfying(
            fix ->
                assertThat(fix)
                    .startsWith("the JSON answer is not vLLM's: " + seen)
                    .doesNotContain("Please reduce")
                    .doesNotContain("gateway]"));
  }

  @Test
  void theFlatEnvelopeIsOnlyTheOldSentences() {
    String flatCurrent =
        "{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens. However, you"
            + " requested 1 output tokens and your prompt contains 4097 input tokens, for a total of 4098"
            + " tokens. Please reduce the length of the input prompt or the number of requested output"
            + " tokens. (parameter=input_tokens, value=4097)\",\"type\":\"BadRequestError\","
            + "\"param\":null,\"code\":400}";
    assertThat(refused(answer(400, "application/json", flatCurrent))).isFalse();
    assertThat(
            refused(
                answer(
                    400,
                    "application/json",
                    "{\"object\":\"chat.completion\",\"message\":\"This model's maximum context length is 4096 tokens. However, you requested 4098 tokens (4097 in the messages, 1 in the completion). Please reduce the length of the messages or completion.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}")))
        .isFalse();
  }

  @Test
  void theRightBodyWithTheWrongStatusOrWrappingIsNotVllmsRefusal() {
    assertThat(refused(answer(200, "application/json", CURRENT))).as("HTTP 200").isFalse();
    assertThat(refused(answer(422, "application/json", CURRENT))).as("HTTP 422").isFalse();
    RefusalLookAlikes.assertWrappedBodiesAreNotRefusals(
        VllmRejectionTest::refused,
        (type, body) -> answer(400, type, body),
        CURRENT,
        CURRENT.replace("{\"message\"", "{\"message\":\"x\",\"message\""),
        120);
  }

  @Test
  void withoutThePodsContextLengthNothingIsAttributed() {
    RefusalLookAlikes.assertNothingIsAttributedWithoutThePodsLimit(
        VLLM,
        answer(400, "application/json", CURRENT),
        PROMPT,
        new PoolObservation(2_000_000, OptionalLong.empty(), "0.11.0", null, List.of()),
        "the pod reported no max_model_len");
  }

  @Test
  void aRefusalRecordedByTheSubstringMatcherIsNotCarriedOver() {
    assertThat(VLLM.recognises(400, "BadRequestError: maximum context length", POD)).isFalse();
    assertThat(VLLM.recognises(400, VllmRejection.ERROR_CLASS, POD))
        .as("the whole-message class of kvguard's single prompt, before issue 26")
        .isFalse();
    String v2 =
        VllmRejection.V2 + " refused 4097 tokens with HTTP 400 as " + VllmRejection.ERROR_CLASS;
    String v4 =
        VllmRejection.V4
            + " refused 4096 tokens with HTTP 400 as "
            + VllmRejection.DECODER_PROMPT_CLASS;
    assertThat(VLLM.recognises(400, paths(v2, v4), POD)).isTrue();
    assertThat(VLLM.recognises(400, paths(v2), POD)).as("V4 was never proven").isFalse();
    assertThat(VLLM.recognises(200, paths(v2, v4), POD)).isFalse();
  }

  private static String paths(String... refusals) {
    return io.kvguard.verdict.RejectionOutcome.Refused.ofPaths(400, List.of(refusals), 4_097)
        .errorClass();
  }

  /** V4's prompt: exactly max_model_len token IDs, max_tokens 0 and echo. */
  private static final OverLimitPrompt AT_CONTEXT =
      ((EngineRejection.Plan.Send)
              VLLM.plan(
                  new io.kvguard.verdict.ProbePrompt(
                      VllmRejection.V4,
                      4_096,
                      java.util.Set.of(VllmRejection.DECODER_PROMPT_CLASS),
                      "test"),
                  "m",
                  POD,
                  EngineRejection.Route.POD))
          .prompt();

  /**
   * ffd91ee17a vllm/v1/engine/input_processor.py:438-447 through create_error_response: a
   * VLLMValidationError without a parameter, so param null and nothing appended.
   */
  static final String DECODER_PROMPT =
      "{\"error\":{\"message\":\"The decoder prompt (length 4096) plus the number of requested"
          + " output tokens (at least 1) is longer than the maximum model length of 4096. Make sure"
          + " that `max_model_len` is no smaller than the number of text tokens (prompt + requested"
          + " output tokens).\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}";

  @Test
  void theV4PromptIsExactlyTheContextWithNoOutputTokenAtTheRenderer() {
    String body = new String(AT_CONTEXT.body(), StandardCharsets.UTF_8);

    assertThat(AT_CONTEXT.tokens()).isEqualTo(4_096);
    assertThat(body).endsWith("],\"max_tokens\":0,\"echo\":true,\"stream\":false}");
    assertThat(new String(PROMPT.body(), StandardCharsets.UTF_8))
        .endsWith("],\"max_tokens\":1,\"stream\":false}");
  }

  @Test
  void theDecoderPromptRefusalIsV4s() {
    EngineResponse response = answer(400, "application/json", DECODER_PROMPT);

    assertThat(VLLM.refusal(response, AT_CONTEXT, POD))
        .contains(VllmRejection.DECODER_PROMPT_CLASS);
    assertThat(VLLM.fixFor(response, AT_CONTEXT, POD)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another length|4095|4096|null|its prompt of 4095 tokens",
        "another max_model_len|8192|8192|null|its prompt of 8192 tokens",
        "a length other than the maximum|4096|8192|null|only for a prompt of exactly that length",
        "a param|4096|4096|\"input_tokens\"|its param is not null",
      })
  void aDecoderPromptLookAlikeIsNotV4s(
      String what, String length, String max, String param, String why) {
    String body =
        DECODER_PROMPT
            .replace("(length 4096)", "(length " + length + ")")
            .replace("length of 4096.", "length of " + max + ".")
            .replace("\"param\":null", "\"param\":" + param);
    EngineResponse response = answer(400, "application/json", body);

    assertThat(VLLM.refusal(response, AT_CONTEXT, POD)).isEmpty();
    assertThat(VLLM.fixFor(response, AT_CONTEXT, POD).orElseThrow())
        .contains(why.replace("its prompt of", "a prompt of"));
  }

  @Test
  void theDecoderPromptSentenceCutShortOrInTheFlatEnvelopeIsNotV4s() {
    String cut =
        DECODER_PROMPT.replace(
            " Make sure that `max_model_len` is no smaller than the"
                + " number of text tokens (prompt + requested output tokens).",
            "");
    String flat =
        "{\"object\":\"error\",\"message\":\"The decoder prompt (length 4096) plus the number of"
            + " requested output tokens (at least 1) is longer than the maximum model length of 4096."
            + " Make sure that `max_model_len` is no smaller than the number of text tokens (prompt +"
            + " requested output tokens).\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}";

    assertThat(VLLM.refusal(answer(400, "application/json", cut), AT_CONTEXT, POD)).isEmpty();
    assertThat(VLLM.refusal(answer(400, "application/json", flat), AT_CONTEXT, POD)).isEmpty();
    assertThat(VLLM.fixFor(answer(400, "application/json", flat), AT_CONTEXT, POD).orElseThrow())
        .contains("flat envelope");
  }

  @Test
  void v2sRefusalOfTheV4PromptIsV2sAndNamesTheOutputTokensAsked() {
    // A build whose renderer counts one output token for the V4 prompt refuses it at V2: the
    // probe then names another check's refusal (RejectionProbe), never V4's.
    String v2AtContext =
        CURRENT
            .replace("1 output tokens", "0 output tokens")
            .replace(
                "4097 input tokens, for a total of 4098", "4096 input tokens, for a total of 4096")
            .replace("value=4097", "value=4096");

    assertThat(VLLM.refusal(answer(400, "application/json", v2AtContext), AT_CONTEXT, POD))
        .as("V2's sentence with the V4 request's own numbers (max_tokens 0) is V2's class")
        .contains(VllmRejection.ERROR_CLASS);
    assertThat(
            VLLM.refusal(
                answer(400, "application/json", CURRENT.replace("4097", "4096")), AT_CONTEXT, POD))
        .as("with one output token it is not this request's")
        .isEmpty();
    assertThat(VLLM.refusal(answer(400, "application/json", CURRENT), PROMPT, POD))
        .contains(VllmRejection.ERROR_CLASS);
  }

  @Test
  void thePathsAreV2AboveTheContextAndV4AtIt() throws Exception {
    var plan = VLLM.paths(null, null, 4_097, POD, EngineRejection.Route.POD);

    assertThat(plan)
        .isInstanceOfSatisfying(
            io.kvguard.verdict.AdmissionPlan.Prompts.class,
            prompts ->
                assertThat(prompts.prompts())
                    .extracting(p -> p.check() + "@" + p.tokens())
                    .containsExactly(VllmRejection.V2 + "@4097", VllmRejection.V4 + "@4096"));
    assertThat(
            VLLM.paths(
                null,
                null,
                1,
                new PoolObservation(2_000_000, OptionalLong.empty(), "0.11.0", null, List.of()),
                EngineRejection.Route.POD))
        .isInstanceOf(io.kvguard.verdict.AdmissionPlan.Unprovable.class);
  }

  /**
   * Issue 26 §4: vLLM's token IDs are scanned where an answer has them; its text alone cannot be.
   */
  @Test
  void anAnswersTokenIdsAreScannedAndItsTextAloneIsNamedUncheckable() {
    assertThat(
            VLLM.answerContent(
                answer(
                    200,
                    "application/json",
                    "{\"choices\":[{\"index\":0,\"text\":\"x\",\"token_ids\":[5],"
                        + "\"prompt_token_ids\":[101,100]}]}")))
        .isInstanceOfSatisfying(
            io.kvguard.verdict.AnswerContent.TokenIds.class,
            ids ->
                assertThat(ids.sequences()).containsExactly(new long[] {5}, new long[] {101, 100}));
    assertThat(
            VLLM.answerContent(
                answer(200, "application/json", "{\"choices\":[{\"index\":0,\"text\":\"x\"}]}")))
        .isInstanceOf(io.kvguard.verdict.AnswerContent.Unreadable.class);
    assertThat(new String(PROMPT.body(), StandardCharsets.UTF_8))
        .as("kvguard does not ask for return_token_ids (it would skip V4's detokenization)")
        .doesNotContain("return_token_ids");
  }
}

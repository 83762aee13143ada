package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testing.EngineFixtures;
import io.kvguard.verdict.PoolObservation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * llama.cpp's refusal is recognised by its whole shape: each body below is what a llama.cpp build's
 * own source writes for kvguard's probe (8,193 token IDs to a slot of n_ctx 8192), and each
 * look-alike differs from the recorded d14ce3dab answer in one respect.
 */
class LlamaCppRejectionTest {
  private static final LlamaCppRejection LLAMA = new LlamaCppRejection();
  private static final long SENT = 8_193;
  private static final PoolObservation POD = slot(8_192);
  private static final OverLimitPrompt PROMPT = prompt(SENT);

  /** Recorded from llama-server at d14ce3dab (llamacpp-d14ce3d/completion-np1-400.http). */
  static final String CURRENT =
      "{\"error\":{\"code\":400,\"message\":\"request (8193 tokens) exceeds the available context size"
          + " (8192 tokens), try increasing it\",\"type\":\"exceed_context_size_error\","
          + "\"n_prompt_tokens\":8193,\"n_ctx\":8192}}";

  private static PoolObservation slot(long nCtx) {
    return new PoolObservation(nCtx, OptionalLong.of(nCtx), "b7062", null, List.of());
  }

  private static OverLimitPrompt prompt(long tokens) {
    return ((EngineRejection.Plan.Send) LLAMA.plan(tokens, "m", POD, EngineRejection.Route.POD))
        .prompt();
  }

  private static EngineResponse answer(int status, String contentType, String body) {
    return new EngineResponse(
        "/completion", status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean refused(EngineResponse response) {
    return LLAMA.refusal(response, PROMPT, POD).isPresent();
  }

  @Test
  void theRecordedAnswersOfD14ce3dabAreRecognised() throws Exception {
    for (String file :
        List.of(
            "llamacpp-d14ce3d/completion-np1-400.http",
            "llamacpp-d14ce3d/completion-np1-context-shift-400.http")) {
      var recorded = EngineFixtures.answer(file);
      EngineResponse response =
          new EngineResponse(
              "/completion", recorded.status(), recorded.contentType(), recorded.body());

      assertThat(LLAMA.refusal(response, PROMPT, POD))
          .as(file)
          .contains(LlamaCppRejection.ERROR_CLASS);
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // PR #15780 (a68d91442, 2025-09-04): the type, code 400 and the counts, the old sentence.
        "PR 15780|{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size. try increasing the context size or enable context shift\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":8193,\"n_ctx\":8192}}",
        // PR #16486 (68ee98ae1, 2025-10-10), as reported for build 7062 (issue #17284).
        "PR 16486|{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":8193,\"n_ctx\":8192}}",
        // PR #18174 (cc0a04343, 2025-12-19) to d14ce3dab, keys in another order.
        "PR 18174|{\"error\":{\"n_ctx\":8192,\"n_prompt_tokens\":8193,\"type\":\"exceed_context_size_error\",\"message\":\"request (8193 tokens) exceeds the available context size (8192 tokens), try increasing it\",\"code\":400}}",
      })
  void eachBuildsRefusalIsRecognised(String build, String body) {
    EngineResponse response = answer(400, "application/json; charset=utf-8", body);

    assertThat(LLAMA.refusal(response, PROMPT, POD)).contains(LlamaCppRejection.ERROR_CLASS);
    assertThat(LLAMA.fixFor(response, PROMPT, POD)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another n_ctx, message and field alike|8192|16384|its n_ctx is 16384, and the pod's /props reports a slot n_ctx of 8192",
        "another prompt length, message and field alike|8193|9000|its n_prompt_tokens is 9000, and kvguard sent 8193 token IDs",
        "a message count that is not its field|(8193 tokens)|(8194 tokens)|the prompt length in its message is not its n_prompt_tokens",
        "a message context that is not its field|(8192 tokens)|(4096 tokens)|the context size in its message is not its n_ctx",
        "a count with a leading zero|(8193 tokens)|(08193 tokens)|the prompt length in its message is not its n_prompt_tokens",
        "an extra field|\"n_ctx\":8192}}|\"n_ctx\":8192,\"retryable\":false}}|its fields are not those llama.cpp writes",
        "a missing field|,\"n_ctx\":8192}}|}}|its fields are not those llama.cpp writes",
        "an extra top-level field|\"n_ctx\":8192}}|\"n_ctx\":8192},\"id\":\"x\"}|it is not one \"error\" object alone",
        "OpenAI's type|exceed_context_size_error|context_length_exceeded|its type is not exceed_context_size_error",
        "the older invalid_request_error|exceed_context_size_error|invalid_request_error|its type is invalid_request_error, which llama.cpp builds from PR #15416 to PR #15780",
        "a code as a string|\"code\":400|\"code\":\"400\"|its code is not the number 400",
        "another code|\"code\":400|\"code\":500|its code is not the number 400",
        "a count as a string|\"n_ctx\":8192|\"n_ctx\":\"8192\"|its n_prompt_tokens or n_ctx is not a whole number",
        "a truncated sentence|, try increasing it|| its message is not one of llama.cpp's context-size sentences, whole",
        "a sentence with a prefix|\"message\":\"request|\"message\":\"upstream: request|its message is not one of llama.cpp's context-size sentences, whole",
        "a sentence with a suffix|try increasing it\"|try increasing it [gateway]\"|its message is not one of llama.cpp's context-size sentences, whole",
      })
  void aLookAlikeIsNotLlamaCppsRefusalAndTheReasonSaysWhatDiffered(
      String what, String from, String to, String seen) {
    String body = CURRENT.replace(from, to == null ? "" : to);
    assertThat(body).as("the look-alike differs").isNotEqualTo(CURRENT);
    EngineResponse response = answer(400, "application/json", body);

    assertThat(LLAMA.refusal(response, PROMPT, POD)).isEmpty();
    assertThat(LLAMA.fixFor(response, PROMPT, POD))
        .hasValueSatisfying(
            fix ->
                assertThat(fix)
                    .startsWith(
                        "the JSON answer is not llama.cpp's refusal of this prompt: "
                            + seen.strip())
                    .doesNotContain("try increasing")
                    .doesNotContain("gateway]"));
  }

  @Test
  void aPromptTheSlotAdmitsIsNotRefusedByIt() {
    // A gateway that states the slot's n_ctx and the prompt sent, for a prompt below n_ctx.
    OverLimitPrompt short8000 = prompt(8_000);
    String body = CURRENT.replace("8193", "8000");

    assertThat(LLAMA.refusal(answer(400, "application/json", body), short8000, POD)).isEmpty();
    assertThat(LLAMA.fixFor(answer(400, "application/json", body), short8000, POD).orElseThrow())
        .contains("its n_prompt_tokens is below its n_ctx, which llama.cpp admits");
  }

  @Test
  void theRightBodyWithTheWrongStatusOrWrappingIsNotLlamaCppsRefusal() {
    assertThat(refused(answer(200, "application/json", CURRENT))).as("HTTP 200").isFalse();
    assertThat(refused(answer(422, "application/json", CURRENT))).as("HTTP 422").isFalse();
    assertThat(LLAMA.fixFor(answer(413, "application/json", CURRENT), PROMPT, POD).orElseThrow())
        .contains("it came with HTTP 413, and llama.cpp sends its code, 400");
    RefusalLookAlikes.assertWrappedBodiesAreNotRefusals(
        LlamaCppRejectionTest::refused,
        (type, body) -> answer(400, type, body),
        CURRENT,
        CURRENT.replace("{\"code\"", "{\"code\":500,\"code\""),
        90);
  }

  @Test
  void withoutThePodsSlotContextNothingIsAttributed() {
    RefusalLookAlikes.assertNothingIsAttributedWithoutThePodsLimit(
        LLAMA,
        answer(400, "application/json", CURRENT),
        PROMPT,
        new PoolObservation(8_192, OptionalLong.empty(), "b7062", null, List.of()),
        "the pod reported no slot n_ctx");
  }

  @Test
  void aRefusalRecordedByTheTypeMatcherIsNotCarriedOver() {
    assertThat(LLAMA.recognises(400, "exceed_context_size_error", POD)).isFalse();
    assertThat(LLAMA.recognises(400, LlamaCppRejection.ERROR_CLASS, POD))
        .as("the whole-answer class of kvguard's single S + margin prompt, before issue 26")
        .isFalse();
    String l1 =
        io.kvguard.verdict.RejectionOutcome.Refused.ofPaths(
                400,
                List.of(
                    LlamaCppRejection.L1
                        + " refused 8192 tokens with HTTP 400 as "
                        + LlamaCppRejection.ERROR_CLASS),
                8_193)
            .errorClass();
    assertThat(LLAMA.recognises(400, l1, POD)).isTrue();
    assertThat(LLAMA.recognises(500, l1, POD)).isFalse();
  }

  @Test
  void theOnePathIsL1AtTheSlotContextItself() {
    PoolObservation slot =
        new PoolObservation(8_192, OptionalLong.of(8_192), "b7062", null, List.of());

    assertThat(LLAMA.paths(null, null, 8_193, slot, EngineRejection.Route.POD))
        .isInstanceOfSatisfying(
            io.kvguard.verdict.AdmissionPlan.Prompts.class,
            prompts ->
                assertThat(prompts.prompts())
                    .singleElement()
                    .satisfies(
                        p -> {
                          assertThat(p.check()).isEqualTo(LlamaCppRejection.L1);
                          assertThat(p.tokens())
                              .as("N = S, the refusal being N >= S")
                              .isEqualTo(8_192);
                          assertThat(p.refusedBy(LlamaCppRejection.ERROR_CLASS)).isTrue();
                        }));
    assertThat(
            LLAMA.paths(
                null,
                null,
                1,
                new PoolObservation(8_192, OptionalLong.empty(), "b7062", null, List.of()),
                EngineRejection.Route.POD))
        .isInstanceOf(io.kvguard.verdict.AdmissionPlan.Unprovable.class);
  }

  /** Issue 26 §4: the probe asks for the generated token IDs, and the answer's are scanned. */
  @Test
  void anAnswersTokenIdsAreWhatIsScannedForMarkers() throws Exception {
    assertThat(new String(PROMPT.body(), StandardCharsets.UTF_8))
        .endsWith(",\"n_predict\":1,\"return_tokens\":true,\"stream\":false}");
    assertThat(
            LLAMA.answerContent(
                answer(200, "application/json", "{\"content\":\" the\",\"tokens\":[101,7]}")))
        .isInstanceOfSatisfying(
            io.kvguard.verdict.AnswerContent.TokenIds.class,
            ids -> assertThat(ids.sequences()).singleElement().isEqualTo(new long[] {101, 7}));
    // A build that ignores return_tokens (b4735, recorded truncating an over-long prompt).
    var recorded = EngineFixtures.answer("llamacpp-b4735/completion-200-truncated.http");
    assertThat(
            LLAMA.answerContent(
                new EngineResponse(
                    "/completion", recorded.status(), recorded.contentType(), recorded.body())))
        .isEqualTo(
            new io.kvguard.verdict.AnswerContent.Unreadable(
                "the answer lists no token IDs in tokens, which llama-server fills when asked with"
                    + " return_tokens"));
  }
}

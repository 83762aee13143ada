package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.AnswerContent;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbePrompt;
import io.kvguard.verdict.RejectionOutcome;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * llama.cpp server's refusal of an over-long prompt on {@code POST /completion} (which accepts
 * token IDs), matched whole: HTTP 400 and exactly {@code {"error": {"code": 400, "message", "type":
 * "exceed_context_size_error", "n_prompt_tokens": N, "n_ctx": S}}} ({@code format_error_response}
 * in {@code tools/server/server-common.cpp}, the counts added by {@code
 * server_task_result_error::to_json} in {@code server-task.cpp}, the status being the body's code
 * ({@code server_res_generator::error} in {@code server-context.cpp}), at d14ce3dab), whose message
 * is one of the sentences {@link LlamaCppLengthSentence} lists, with N the prompt kvguard sent
 * (token IDs are counted as given) and S the slot {@code n_ctx} the pod's {@code /props} reported.
 *
 * <p>The type, code 400 and the counts arrived together with PR #15780 (September 2025); PR #16486
 * (October 2025) made a streamed request's refusal HTTP 400 too (it was HTTP 200 with the error in
 * the stream; kvguard does not stream). Builds from PR #15416 (August 2025, context shift off by
 * default) to PR #15780 refuse as {@code invalid_request_error} without counts, which nothing ties
 * to this probe; builds before PR #15416 shift the context by default: they truncate the prompt and
 * answer 200.
 */
final class LlamaCppRejection implements EngineRejection {
  static final String COMPLETION = "/completion";
  static final String EXCEED_CONTEXT_SIZE = "exceed_context_size_error";

  /**
   * The refusal's class. A record of the earlier, type-matched class ("exceed_context_size_error")
   * is not carried over: that build recognised answers this one does not.
   */
  static final String ERROR_CLASS = EXCEED_CONTEXT_SIZE + ", whole answer matched";

  private static final Set<String> ERROR_FIELDS =
      Set.of("code", "message", "type", "n_prompt_tokens", "n_ctx");

  /** The path as messages and records name it. */
  static final String L1 = "L1 slot context check (N >= n_ctx)";

  @Override
  public String engineName() {
    return "llama.cpp";
  }

  /**
   * One path: L1, {@code n_tokens >= slot.n_ctx} (d14ce3dab {@code
   * tools/server/server-context.cpp:2500-2507}), the only check a generation prompt meets at
   * admission (L2 is the embedding check; L3 to L5 act while decoding, not at admission). Its
   * boundary is S itself, so the prompt is N = S, the shortest one it refuses: a server that admits
   * S tokens (a build that truncates, or one whose slot is not the n_ctx /props reports) is caught
   * where a longer prompt could pass for a refusal of something else.
   */
  @Override
  public AdmissionPlan paths(
      EngineHttp http,
      EngineEndpoint endpoint,
      long promptTokens,
      PoolObservation observation,
      Route route) {
    return AdmissionPlan.sizedBy(
        observation.engineContextTokens(),
        "/props reports no slot n_ctx, so the slot context check cannot be reached at its"
            + " boundary",
        slot ->
            new AdmissionPlan.Prompts(
                List.of(
                    new ProbePrompt(
                        L1,
                        slot,
                        Set.of(ERROR_CLASS),
                        "N = S = /props default_generation_settings.n_ctx = "
                            + slot
                            + ": the shortest prompt the slot context check refuses (N >= S)"))));
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(
        OverLimitPrompt.tokenIds(
            COMPLETION,
            "{\"prompt\":",
            promptTokens,
            // return_tokens: an answer lists the token IDs it generated, for the marker scan.
            ",\"n_predict\":1,\"return_tokens\":true,\"stream\":false}"));
  }

  /**
   * The generated token IDs of llama-server's answer: {@code tokens}, filled only when the request
   * asks {@code return_tokens} (kvguard does), d14ce3dab {@code tools/server/server-task.cpp:265}
   * (the flag), {@code :747-751} (the answer), {@code server-context.cpp:1393-1394} (filled per
   * token). A build that ignores the flag answers an empty list: nothing to scan.
   */
  @Override
  public AnswerContent answerContent(EngineResponse response) {
    return AnswerContents.ofJsonObject(
        response,
        engineName(),
        body -> {
          Optional<long[]> tokens = AnswerContents.tokenIds(body, "tokens");
          if (tokens.isEmpty() || tokens.get().length == 0) {
            return new AnswerContent.Unreadable(
                "the answer lists no token IDs in tokens, which llama-server fills when asked with"
                    + " return_tokens");
          }
          return new AnswerContent.TokenIds(List.of(tokens.get()));
        });
  }

  @Override
  public Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    return notLlamaCpps(response, sent, observation).isEmpty()
        ? Optional.of(ERROR_CLASS)
        : Optional.empty();
  }

  @Override
  public boolean recognises(int status, String errorClass, PoolObservation observation) {
    // Only a per-path record: kvguard before issue 26 sent S + margin tokens, which never showed
    // that a prompt of exactly S tokens is refused.
    return RejectionOutcome.Refused.perPathRecord(
        status, errorClass, 400, Set.of(ERROR_CLASS), Set.of(ERROR_CLASS));
  }

  @Override
  public String refusalShape() {
    return "llama.cpp's length refusal (HTTP 400, {\"error\": {\"code\": 400, \"type\": \""
        + EXCEED_CONTEXT_SIZE
        + "\", its \"exceeds the available context size\" message, n_prompt_tokens the prompt"
        + " sent and n_ctx the slot context /props reports}})";
  }

  /** For a JSON answer: what in it is not llama.cpp's refusal of this probe. */
  @Override
  public Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation) {
    if (ErrorBodies.strictObject(response).isEmpty()) {
      return Optional.empty();
    }
    return notLlamaCpps(response, prompt, observation)
        .map(
            seen ->
                "the JSON answer is not llama.cpp's refusal of this prompt: "
                    + seen
                    + ". Something other than the engine answered (a gateway that counts tokens"
                    + " itself, another engine behind the port) or a llama.cpp build whose refusal"
                    + " kvguard has not read: point the role's port at llama-server itself and check"
                    + " which component answered in its log");
  }

  @Override
  public String answerMeaning() {
    return "llama.cpp builds before PR #15416 (August 2025) shift the context by default: they truncate an"
        + " over-long prompt and answer it; run a newer build, and never start the server with --context-shift";
  }

  /**
   * Why the answer is not llama.cpp's refusal of {@code sent}, in words that quote no part of the
   * body but numbers kvguard sent or the pod reported; empty when it is.
   */
  private static Optional<String> notLlamaCpps(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    Optional<JsonNode> body = ErrorBodies.strictObject(response);
    if (body.isEmpty()) {
      return Optional.of("the body is not one complete JSON object");
    }
    Optional<JsonNode> error =
        ErrorBodies.hasExactly(body.get(), Set.of("error"))
            ? ErrorBodies.child(body.get(), "error")
            : Optional.empty();
    if (error.isEmpty()) {
      return Optional.of("it is not one \"error\" object alone, as llama.cpp's res_error writes");
    }
    JsonNode e = error.get();
    Optional<String> type = ErrorBodies.text(e, "type");
    if (type.filter("invalid_request_error"::equals).isPresent()) {
      return Optional.of(
          "its type is invalid_request_error, which llama.cpp builds from PR #15416 to PR #15780"
              + " (August to September 2025) answer without the counts that would tie it to this"
              + " probe: run a build with PR #15780 or later");
    }
    if (!type.filter(EXCEED_CONTEXT_SIZE::equals).isPresent()) {
      return Optional.of("its type is not " + EXCEED_CONTEXT_SIZE);
    }
    if (!ErrorBodies.hasExactly(e, ERROR_FIELDS)) {
      return Optional.of(
          "its fields are not those llama.cpp writes (error.code, error.message, error.type,"
              + " error.n_prompt_tokens, error.n_ctx)");
    }
    if (!isInt(e.get("code")) || e.get("code").intValue() != 400) {
      return Optional.of("its code is not the number 400");
    }
    if (response.status() != 400) {
      return Optional.of(
          "it came with HTTP " + response.status() + ", and llama.cpp sends its code, 400");
    }
    Optional<String> message = ErrorBodies.text(e, "message");
    Optional<LlamaCppLengthSentence> form = message.flatMap(LlamaCppLengthSentence::of);
    if (form.isEmpty()) {
      return Optional.of("its message is not one of llama.cpp's context-size sentences, whole");
    }
    JsonNode prompt = e.get("n_prompt_tokens");
    JsonNode context = e.get("n_ctx");
    if (!isInt(prompt) || !isInt(context)) {
      return Optional.of("its n_prompt_tokens or n_ctx is not a whole number");
    }
    Optional<String> inMessage =
        form.get().mismatch(message.get(), prompt.longValue(), context.longValue());
    if (inMessage.isPresent()) {
      return inMessage;
    }
    if (prompt.longValue() != sent.tokens()) {
      return Optional.of(
          "its n_prompt_tokens is "
              + prompt.longValue()
              + ", and kvguard sent "
              + sent.tokens()
              + " token IDs");
    }
    OptionalLong slot = observation.engineContextTokens();
    if (slot.isEmpty()) {
      return Optional.of(
          "the pod reported no slot n_ctx, so the refusal's n_ctx cannot be checked");
    }
    if (context.longValue() != slot.getAsLong()) {
      return Optional.of(
          "its n_ctx is "
              + context.longValue()
              + ", and the pod's /props reports a slot n_ctx of "
              + slot.getAsLong());
    }
    if (prompt.longValue() < context.longValue()) {
      return Optional.of("its n_prompt_tokens is below its n_ctx, which llama.cpp admits");
    }
    return Optional.empty();
  }

  /** A JSON integer that fits an int, as llama.cpp's int32 counts and code are written. */
  private static boolean isInt(JsonNode node) {
    return node != null && node.isIntegralNumber() && node.canConvertToInt();
  }
}

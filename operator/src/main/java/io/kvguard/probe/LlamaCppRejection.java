package io.kvguard.probe;

import io.kvguard.verdict.PoolObservation;
import java.util.Optional;

/**
 * llama.cpp server's refusal of an over-long prompt on {@code POST /completion} (which accepts
 * token IDs): HTTP 400 {@code {"error": {"code": 400, "type": "exceed_context_size_error",
 * "n_prompt_tokens": N, "n_ctx": M, …}}} when the prompt is at least the slot's {@code n_ctx}
 * ({@code tools/server/server-context.cpp}; {@code format_error_response} in {@code
 * server-common.cpp}; the status is the body's code, {@code res_error} in {@code server.cpp}). The
 * error type arrived with PR #15780 (September 2025), HTTP 400 everywhere with PR #16486 (October
 * 2025). Builds before PR #15416 (August 2025) shift the context by default: they truncate the
 * prompt and answer 200.
 */
final class LlamaCppRejection implements EngineRejection {
  static final String COMPLETION = "/completion";
  static final String EXCEED_CONTEXT_SIZE = "exceed_context_size_error";

  @Override
  public String engineName() {
    return "llama.cpp";
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(
        OverLimitPrompt.tokenIds(
            COMPLETION, "{\"prompt\":", promptTokens, ",\"n_predict\":1,\"stream\":false}"));
  }

  @Override
  public Optional<String> refusal(EngineResponse response) {
    if (response.status() != 400) {
      return Optional.empty();
    }
    return ErrorBodies.object(response)
        .flatMap(body -> ErrorBodies.child(body, "error"))
        .flatMap(error -> ErrorBodies.text(error, "type"))
        .filter(EXCEED_CONTEXT_SIZE::equals);
  }

  @Override
  public boolean recognises(int status, String errorClass) {
    return status == 400 && EXCEED_CONTEXT_SIZE.equals(errorClass);
  }

  @Override
  public String refusalShape() {
    return "llama.cpp's length refusal (HTTP 400 with error type \"" + EXCEED_CONTEXT_SIZE + "\")";
  }

  @Override
  public String answerMeaning() {
    return "llama.cpp builds before PR #15416 (August 2025) shift the context by default: they truncate an"
        + " over-long prompt and answer it; run a newer build, and never start the server with --context-shift";
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.PoolObservation;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * vLLM's refusal of an over-long prompt on {@code POST /v1/completions} (which accepts a prompt of
 * token IDs): HTTP 400 whose message says "maximum context length is N tokens", read in
 * vllm-project/vllm {@code vllm/entrypoints/openai/engine/serving.py} and the renderer's {@code
 * _create_tokens_prompt}. The envelope changed between releases: older ones answer {@code
 * {"object": "error", "message": …, "type": …}}, newer ones the OpenAI form {@code {"error":
 * {"message": …, "type": …}}} ({@code vllm/entrypoints/openai/engine/protocol.py} {@code
 * ErrorResponse}); both are accepted. In both the error type is {@code BadRequestError} ({@code
 * create_error_response} in {@code serving.py}). The same message under another type (OpenAI's
 * {@code invalid_request_error}, a gateway's empty type) is OpenAI's own wording, answered by a
 * gateway that counted the tokens before the engine saw them: no refusal of vLLM's.
 */
final class VllmRejection implements EngineRejection {
  static final String COMPLETIONS = "/v1/completions";
  private static final Pattern MAXIMUM_CONTEXT =
      Pattern.compile("maximum context length is [0-9]+ tokens");
  static final String ERROR_TYPE = "BadRequestError";

  @Override
  public String engineName() {
    return "vLLM";
  }

  /**
   * The prompt goes in an OpenAI completions request, whose {@code model} field names the served
   * model.
   */
  @Override
  public Optional<String> modelNamedBy() {
    return Optional.of(COMPLETIONS);
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(
        OverLimitPrompt.tokenIds(
            COMPLETIONS,
            "{\"model\":" + OverLimitPrompt.quote(model) + ",\"prompt\":",
            promptTokens,
            ",\"max_tokens\":1,\"stream\":false}"));
  }

  @Override
  public Optional<String> refusal(EngineResponse response) {
    if (response.status() != 400) {
      return Optional.empty();
    }
    Optional<JsonNode> body = ErrorBodies.object(response);
    Optional<JsonNode> error =
        body.flatMap(b -> ErrorBodies.child(b, "error"))
            .or(() -> body.filter(b -> "error".equals(ErrorBodies.text(b, "object").orElse(null))));
    Optional<String> message = error.flatMap(e -> ErrorBodies.text(e, "message"));
    boolean vllmsType =
        ERROR_TYPE.equals(error.flatMap(e -> ErrorBodies.text(e, "type")).orElse(null));
    if (!vllmsType || message.isEmpty() || !MAXIMUM_CONTEXT.matcher(message.get()).find()) {
      return Optional.empty();
    }
    return Optional.of(ERROR_TYPE + ": maximum context length");
  }

  @Override
  public boolean recognises(int status, String errorClass) {
    return status == 400 && (ERROR_TYPE + ": maximum context length").equals(errorClass);
  }

  @Override
  public String refusalShape() {
    return "vLLM's length refusal (HTTP 400, error type "
        + ERROR_TYPE
        + ", whose message says \"maximum context"
        + " length is N tokens\")";
  }
}

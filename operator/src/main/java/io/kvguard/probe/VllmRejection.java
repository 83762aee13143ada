package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.PoolObservation;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * vLLM's refusal of an over-long prompt on {@code POST /v1/completions} (which accepts a prompt of token IDs):
 * HTTP 400 whose message says "maximum context length is N tokens", read in vllm-project/vllm
 * {@code vllm/entrypoints/openai/engine/serving.py} and the renderer's {@code _create_tokens_prompt}. The
 * envelope changed between releases: older ones answer {@code {"object": "error", "message": …, "type": …}},
 * newer ones the OpenAI form {@code {"error": {"message": …, "type": …}}}
 * ({@code vllm/entrypoints/openai/engine/protocol.py} {@code ErrorResponse}); both are accepted.
 */
final class VllmRejection implements EngineRejection {
  static final String COMPLETIONS = "/v1/completions";
  private static final Pattern MAXIMUM_CONTEXT = Pattern.compile("maximum context length is [0-9]+ tokens");
  private static final Pattern ERROR_TYPE = Pattern.compile("[A-Za-z_]{1,40}");

  @Override
  public String engineName() {
    return "vLLM";
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(OverLimitPrompt.json(COMPLETIONS, "{\"model\":" + OverLimitPrompt.quote(model) + ",\"prompt\":"
        + OverLimitPrompt.tokenIds(promptTokens) + ",\"max_tokens\":1,\"stream\":false}"));
  }

  @Override
  public Optional<String> refusal(EngineResponse response) {
    if (response.status() != 400) {
      return Optional.empty();
    }
    Optional<JsonNode> body = ErrorBodies.object(response);
    Optional<JsonNode> error = body.flatMap(b -> ErrorBodies.child(b, "error"))
        .or(() -> body.filter(b -> "error".equals(ErrorBodies.text(b, "object").orElse(null))));
    Optional<String> message = error.flatMap(e -> ErrorBodies.text(e, "message"));
    if (message.isEmpty() || !MAXIMUM_CONTEXT.matcher(message.get()).find()) {
      return Optional.empty();
    }
    String type = error.flatMap(e -> ErrorBodies.text(e, "type")).filter(t -> ERROR_TYPE.matcher(t).matches())
        .orElse("error");
    return Optional.of(type + ": maximum context length");
  }

  @Override
  public String refusalShape() {
    return "vLLM's length refusal (HTTP 400 whose error message says \"maximum context length is N tokens\")";
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.PoolObservation;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * vLLM's refusal of an over-long prompt on {@code POST /v1/completions} (which accepts a prompt of
 * token IDs), matched whole: HTTP 400, a JSON body with exactly the fields vLLM's {@code
 * ErrorResponse} serialises (the flat {@code {"object": "error", "message", "type", "param",
 * "code"}} up to PR #22099, 2025-08-07, and {@code {"error": {"message", "type", "param", "code"}}}
 * since), type {@code BadRequestError} ({@code create_error_response}), code 400, and a message
 * that is one of the prompt-length sentences vLLM has written ({@link VllmLengthSentence}) with
 * numbers that are this probe's: the prompt kvguard sent, the one output token it asked for, and
 * the {@code max_model_len} the pod reported. OpenAI's own wording under another type, a gateway's
 * copy with other numbers or extra fields, or the sentence cut short proves nothing of vLLM's.
 */
final class VllmRejection implements EngineRejection {
  static final String COMPLETIONS = "/v1/completions";
  static final String ERROR_TYPE = "BadRequestError";

  /**
   * The refusal's class. A record of the earlier, substring-matched class ("BadRequestError:
   * maximum context length") is not carried over: that build recognised answers this one does not.
   */
  static final String ERROR_CLASS = ERROR_TYPE + ": maximum context length, whole message matched";

  /** {@code max_tokens} of the probe's request. */
  static final long OUTPUT_TOKENS = 1;

  private static final Set<String> FLAT_FIELDS =
      Set.of("object", "message", "type", "param", "code");
  private static final Set<String> ERROR_FIELDS = Set.of("message", "type", "param", "code");

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
            ",\"max_tokens\":" + OUTPUT_TOKENS + ",\"stream\":false}"));
  }

  /** Without the probe's figures nothing can be attributed to vLLM. */
  @Override
  public Optional<String> refusal(EngineResponse response) {
    return Optional.empty();
  }

  @Override
  public Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    return notVllms(response, sent, observation).isEmpty()
        ? Optional.of(ERROR_CLASS)
        : Optional.empty();
  }

  @Override
  public boolean recognises(int status, String errorClass) {
    return status == 400 && ERROR_CLASS.equals(errorClass);
  }

  @Override
  public String refusalShape() {
    return "vLLM's length refusal (HTTP 400, a JSON error of type "
        + ERROR_TYPE
        + " and code 400 whose message is vLLM's whole \"maximum context length\" sentence"
        + " with the prompt sent and the pod's max_model_len)";
  }

  /** For a JSON answer: what in it is not vLLM's refusal of this probe. */
  @Override
  public Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation) {
    if (ErrorBodies.strictObject(response).isEmpty()) {
      return Optional.empty();
    }
    return notVllms(response, prompt, observation)
        .map(
            seen ->
                "the JSON answer is not vLLM's: "
                    + seen
                    + ". Something other than the engine answered (a gateway that counts tokens"
                    + " itself, another engine behind the port) or a vLLM build whose refusal"
                    + " kvguard has not read: point the role's port at the engine itself and check"
                    + " which component answered in its logs");
  }

  /**
   * Why the answer is not vLLM's refusal of {@code sent}, in words that quote no part of the body
   * but numbers the sentence states; empty when it is.
   */
  private static Optional<String> notVllms(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    Optional<JsonNode> body = ErrorBodies.strictObject(response);
    if (body.isEmpty()) {
      return Optional.of("the body is not one complete JSON object");
    }
    JsonNode error;
    if (ErrorBodies.hasExactly(body.get(), FLAT_FIELDS)) {
      if (!"error".equals(ErrorBodies.text(body.get(), "object").orElse(null))) {
        return Optional.of("its object field is not \"error\"");
      }
      error = body.get();
    } else if (ErrorBodies.hasExactly(body.get(), Set.of("error"))
        && ErrorBodies.child(body.get(), "error")
            .filter(e -> ErrorBodies.hasExactly(e, ERROR_FIELDS))
            .isPresent()) {
      error = body.get().get("error");
    } else {
      return Optional.of(
          "its fields are not those vLLM's ErrorResponse has (error.message, error.type, error.param,"
              + " error.code, or object, message, type, param, code before PR #22099)");
    }
    if (!ERROR_TYPE.equals(ErrorBodies.text(error, "type").orElse(null))) {
      return Optional.of("its type is not " + ERROR_TYPE);
    }
    JsonNode code = error.get("code");
    if (!code.isIntegralNumber() || !code.canConvertToInt() || code.intValue() != 400) {
      return Optional.of("its code is not the number 400");
    }
    if (response.status() != 400) {
      return Optional.of(
          "it came with HTTP " + response.status() + ", and vLLM sends its code, 400");
    }
    JsonNode param = error.get("param");
    if (!param.isNull() && !param.isTextual()) {
      return Optional.of("its param is neither null nor a string");
    }
    Optional<String> message = ErrorBodies.text(error, "message");
    Optional<VllmLengthSentence> form = message.flatMap(VllmLengthSentence::of);
    if (form.isEmpty()) {
      return Optional.of("its message is not one of vLLM's prompt-length sentences, whole");
    }
    if (!form.get().param().allows(param.isNull() ? null : param.asText())) {
      return Optional.of("its param is not the one vLLM sends with that sentence");
    }
    OptionalLong context = observation.engineContextTokens();
    if (context.isEmpty()) {
      return Optional.of(
          "the pod reported no max_model_len, so the sentence's numbers cannot be checked");
    }
    return form.get().mismatch(message.get(), sent.tokens(), OUTPUT_TOKENS, context.getAsLong());
  }
}

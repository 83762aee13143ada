package io.kvguard.probe;

import io.kvguard.verdict.PoolObservation;
import java.util.Optional;

/**
 * TGI's refusal of an over-long prompt on {@code POST /generate}, read in
 * huggingface/text-generation-inference at v1.4.5 through v3.3.7: validation fails with {@code
 * ValidationError::MaxTotalTokens} ("`inputs` tokens + `max_new_tokens` must be <= N") or {@code
 * InputLength} ("`inputs` must have less than N tokens") ({@code router/src/validation.rs}), which
 * the router answers as HTTP 422 {@code {"error": "Input validation error: …", "error_type":
 * "validation"}} ({@code router/src/server.rs}, {@code router/src/infer/mod.rs}).
 *
 * <p>TGI takes text only, and since 2.4.1 its router caps request bodies ({@code --payload-limit},
 * default 2,000,000 bytes, {@code DefaultBodyLimit} in {@code router/src/server.rs}): axum answers
 * a larger body with HTTP 413 "length limit exceeded" before TGI's validation runs, which proves
 * nothing about it.
 */
final class TgiRejection implements EngineRejection {
  static final String GENERATE = "/generate";
  private static final String TOTAL_TOKENS =
      "Input validation error: `inputs` tokens + `max_new_tokens` must be <= ";
  private static final String INPUT_LENGTH =
      "Input validation error: `inputs` must have less than ";

  @Override
  public String engineName() {
    return "TGI";
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    // One " a" per token: at least one token each with every common tokenizer.
    return new Plan.Send(
        OverLimitPrompt.text(
            GENERATE,
            "{\"inputs\":\"",
            " a",
            promptTokens,
            "\",\"parameters\":{\"max_new_tokens\":1}}"));
  }

  @Override
  public Optional<String> refusal(EngineResponse response) {
    if (response.status() != 422) {
      return Optional.empty();
    }
    return ErrorBodies.object(response)
        .filter(body -> "validation".equals(ErrorBodies.text(body, "error_type").orElse(null)))
        .flatMap(body -> ErrorBodies.text(body, "error"))
        .filter(error -> error.startsWith(TOTAL_TOKENS) || error.startsWith(INPUT_LENGTH))
        .map(error -> "validation");
  }

  @Override
  public boolean recognises(int status, String errorClass) {
    return status == 422 && "validation".equals(errorClass);
  }

  @Override
  public String refusalShape() {
    return "TGI's length refusal (HTTP 422 with error_type \"validation\" and \"`inputs` tokens + `max_new_tokens`"
        + " must be <= N\" or \"`inputs` must have less than N tokens\")";
  }

  @Override
  public Optional<String> fixFor(EngineResponse response, OverLimitPrompt prompt) {
    if (response.status() != 413) {
      return Optional.empty();
    }
    // Only numbers kvguard saw: the size of what it sent. The limit in force is not visible from
    // outside.
    return Optional.of(
        "TGI 2.4.1 and later refuse request bodies above --payload-limit before validating them,"
            + " and this request is "
            + prompt.contentLength()
            + " bytes: raise the engine's --payload-limit above "
            + prompt.contentLength()
            + " bytes");
  }
}

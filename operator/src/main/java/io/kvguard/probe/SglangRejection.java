package io.kvguard.probe;

import io.kvguard.verdict.PoolObservation;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * SGLang's over-long refusals on its native {@code POST /generate}, read in sgl-project/sglang main
 * 8905cbd (2026-07-20, after 0.5.15): {@code http_server.py} {@code generate_request} turns every
 * {@code ValueError} into HTTP 400 {@code {"error": {"message": …}}} ({@code
 * _create_error_response}); the length checks that raise one are the tokenizer's ({@code
 * tokenizer_manager.py} {@code _validate_one_request}: context length, then prompt +
 * max_new_tokens) and the scheduler's ({@code managers/utils.py} {@code validate_input_length},
 * aborted with 400 and re-raised by the tokenizer manager). Wordings since PR #2876 (January 2025).
 *
 * <p>Prefill and decode servers: a request without {@code bootstrap_host}/{@code bootstrap_room} is
 * still checked by the tokenizer first, so a prompt at or above the context length is refused
 * exactly as on a unified server. A shorter one passes on into the disaggregation queues, where the
 * prefill server waits for a decode peer that never comes ({@code disaggregation/prefill.py},
 * {@code SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT}, 300 s, then HTTP 500) and the decode server
 * cannot reach a prefill server at {@code None} ({@code disaggregation/decode.py}, HTTP 500):
 * neither answer says anything about the rejection path, so such a prompt is only sent through the
 * router, which adds the bootstrap fields.
 *
 * <p>The Rust front end ({@code SGLANG_RUST_SERVER=1}, 0.5.17 and later; read at v0.5.18 through
 * the fork bytedance-iaas/sglang) runs the same two tokenizer checks with the same wordings ({@code
 * rust/sglang-server/src/tokenizer_manager/ingress.rs} {@code check_total_tokens}) as {@code
 * Error::Validation}, whose text is prefixed "validation failed: " ({@code error.rs}) and answered
 * as HTTP 400 {@code {"error": {"message": …, "code": 400}}} ({@code api_server/native_api.rs}
 * {@code drain_unary}, {@code utils/response.rs} {@code error_value}). The scheduler's refusal
 * reaches it unprefixed, as on the Python server.
 */
final class SglangRejection implements EngineRejection {
  static final String GENERATE = "/generate";
  private static final Pattern CONTEXT_CHECK =
      Pattern.compile(
          "The input \\([0-9]+ tokens\\) is longer than the model's context length \\([0-9]+ tokens\\)\\..*",
          Pattern.DOTALL);
  private static final Pattern TOTAL_CHECK =
      Pattern.compile(
          "Requested token count exceeds the model's maximum context length of [0-9]+ tokens\\..*",
          Pattern.DOTALL);
  private static final Pattern SCHEDULER_CHECK =
      Pattern.compile(
          "Input length \\([0-9]+ tokens\\) exceeds the maximum allowed length \\([0-9]+ tokens\\)\\..*",
          Pattern.DOTALL);

  /** The prefix of the Rust front end's validation errors ({@code error.rs}). */
  private static final String RUST_VALIDATION = "validation failed: ";

  @Override
  public String engineName() {
    return "SGLang";
  }

  /**
   * Through sgl-model-gateway's prefill/decode router, which adds bootstrap_host and bootstrap_room
   * itself.
   */
  @Override
  public boolean takes(Route route) {
    return true;
  }

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    String mode = observation.disaggregationMode();
    if (mode != null && route == Route.POD) {
      OptionalLong context = observation.engineContextTokens();
      if (context.isEmpty() || promptTokens < context.getAsLong()) {
        return new Plan.Skip(
            "the engine runs in disaggregation mode "
                + mode
                + " and the "
                + promptTokens
                + "-token prompt is shorter than its context length"
                + context.stream().mapToObj(c -> " of " + c + " tokens").findFirst().orElse("")
                + ": sent to this server without bootstrap_host and bootstrap_room it would"
                + " wait in the disaggregation queues for a peer (SGLang answers HTTP 500 after"
                + " SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT), which proves nothing about the over-pool rejection path."
                + " Lower the engine's --context-length to at most its pool (then the prompt is refused before"
                + " disaggregation), or test that path through the prefill/decode router with"
                + " `check --rejection-probe --pd-router`");
      }
    }
    return new Plan.Send(
        OverLimitPrompt.tokenIds(
            GENERATE,
            "{\"input_ids\":",
            promptTokens,
            ",\"sampling_params\":{\"max_new_tokens\":1},\"stream\":false}"));
  }

  @Override
  public Optional<String> refusal(EngineResponse response) {
    if (response.status() != 400) {
      return Optional.empty();
    }
    Optional<String> message =
        ErrorBodies.object(response)
            .flatMap(body -> ErrorBodies.child(body, "error"))
            .flatMap(error -> ErrorBodies.text(error, "message"));
    if (message.isEmpty()) {
      return Optional.empty();
    }
    if (message.get().startsWith(RUST_VALIDATION)) {
      return rustTokenizerCheck(response, message.get().substring(RUST_VALIDATION.length()));
    }
    if (CONTEXT_CHECK.matcher(message.get()).matches()) {
      return Optional.of("context-length check");
    }
    if (TOTAL_CHECK.matcher(message.get()).matches()) {
      return Optional.of("total-token check");
    }
    if (SCHEDULER_CHECK.matcher(message.get()).matches()) {
      return Optional.of("validate_input_length");
    }
    return Optional.empty();
  }

  /**
   * The Rust front end's tokenizer refusal: its whole body shape, {@code "code": 400} included, and
   * only the two length checks it prefixes.
   */
  private static Optional<String> rustTokenizerCheck(EngineResponse response, String checked) {
    boolean code400 =
        ErrorBodies.object(response)
            .flatMap(body -> ErrorBodies.child(body, "error"))
            .map(error -> error.get("code"))
            .filter(code -> code.isIntegralNumber() && code.asLong() == 400)
            .isPresent();
    if (!code400) {
      return Optional.empty();
    }
    if (CONTEXT_CHECK.matcher(checked).matches()) {
      return Optional.of("context-length check");
    }
    if (TOTAL_CHECK.matcher(checked).matches()) {
      return Optional.of("total-token check");
    }
    return Optional.empty();
  }

  @Override
  public boolean recognises(int status, String errorClass) {
    return status == 400
        && java.util.Set.of("context-length check", "total-token check", "validate_input_length")
            .contains(errorClass);
  }

  @Override
  public String refusalShape() {
    return "SGLang's length refusal (HTTP 400 {\"error\": {\"message\": …}} from its context-length,"
        + " total-token or validate_input_length check)";
  }
}

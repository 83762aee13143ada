package io.kvguard.probe;

import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.PoolObservation;
import java.util.Optional;
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
 * <p>Prefill and decode servers: a request without {@code bootstrap_room} that passes the tokenizer
 * is refused at once by the scheduler with HTTP 400 "Invalid request: Disaggregated request
 * received without bootstrap room id. req.rid=…" (since v0.4.6.post5, PR #6504, spelled "boostrap"
 * until PR #17601; v0.5.18 {@code managers/scheduler.py:2443-2460}), before its length check: such
 * a prompt never reaches the path that failed in the incident, which only the router (adding the
 * bootstrap fields) reaches.
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

  /**
   * SGLang's two paths (S1 and, where its band is not empty, S4), sized from /server_info; a
   * prefill or decode pod is not probed on its own (see {@link #PD_POD_UNPROVABLE}).
   */
  @Override
  public AdmissionPlan paths(
      EngineHttp http,
      EngineEndpoint endpoint,
      long promptTokens,
      PoolObservation observation,
      Route route)
      throws ProbeException {
    if (observation.disaggregationMode() != null && route == Route.POD) {
      return new AdmissionPlan.Unprovable(
          "the engine runs in disaggregation mode "
              + observation.disaggregationMode()
              + PD_POD_UNPROVABLE);
    }
    if (observation.engineContextTokens().isEmpty()) {
      return new AdmissionPlan.Unprovable(
          "the engine reports no context length, so its admission paths cannot be sized");
    }
    return SglangAdmissionReader.read(http, endpoint, observation.engineContextTokens().getAsLong())
        .paths();
  }

  static final String PD_POD_UNPROVABLE =
      ": sent to this server without bootstrap_room, a prompt that passes the tokenizer's"
          + " context-length check is refused at once with HTTP 400 \"Disaggregated request received"
          + " without bootstrap room id\" (SGLang since v0.4.6.post5, PR #6504; v0.5.18"
          + " managers/scheduler.py:2443-2460), before the scheduler's length check, so the path that"
          + " failed in the incident is reached only through the prefill/decode router. kvguard does not"
          + " probe through the router yet (issue 26), so this pod stays unproven whatever its version:"
          + " give prefill and decode pools of at least the context length (then both report the same"
          + " max_req_input_len and decode's own scheduler check refuses what prefill's lets through),"
          + " and test the route with `check --rejection-probe --pd-router` against the router";

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
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
    // A record of one refusal only (kvguard before issue 26 sent SGLang a single prompt, which
    // never reached the scheduler's check) no longer stands in: only a per-path record counts.
    var record = new io.kvguard.verdict.RejectionOutcome.Refused(status, errorClass, 0);
    return status == 400
        && record.severalPaths()
        && record.pathClasses().stream().allMatch(RECOGNISED::contains);
  }

  private static final java.util.Set<String> RECOGNISED =
      java.util.Set.of("context-length check", "total-token check", "validate_input_length");

  @Override
  public String refusalShape() {
    return "SGLang's length refusal (HTTP 400 {\"error\": {\"message\": …}} from its context-length,"
        + " total-token or validate_input_length check)";
  }
}

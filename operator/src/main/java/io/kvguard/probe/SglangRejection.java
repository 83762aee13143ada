package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.AnswerContent;
import io.kvguard.verdict.PoolObservation;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

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

  /** {@code max_new_tokens} of the probe's request. */
  static final long OUTPUT_TOKENS = 1;

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
          + " failed in the incident is reached only through the prefill/decode router. This"
          + " ModelDeployment names no router (spec.rejectionProbe.router), so this pod stays unproven"
          + " whatever its version: name the Service in front of the roles there (kvguard then proves"
          + " prefill and decode pods through it), or give prefill and decode pools of at least the context length (then both report the same"
          + " max_req_input_len and decode's own scheduler check refuses what prefill's lets through),"
          + " and test the route with `check --rejection-probe --pd-router` against the router";

  @Override
  public Plan plan(long promptTokens, String model, PoolObservation observation, Route route) {
    return new Plan.Send(
        OverLimitPrompt.tokenIds(
            GENERATE,
            "{\"input_ids\":",
            promptTokens,
            ",\"sampling_params\":{\"max_new_tokens\":" + OUTPUT_TOKENS + "},\"stream\":false}"));
  }

  /**
   * HTTP 400 with exactly the body SGLang writes ({@code {"error": {"message": …}}} from the Python
   * server, {@code {"error": {"message": …, "code": 400}}} from the Rust front end, read strictly),
   * one of its length sentences whole ({@link SglangLengthSentence}), with this probe's numbers.
   */
  @Override
  public Optional<String> refusal(
      EngineResponse response, OverLimitPrompt sent, PoolObservation observation) {
    return sentence(response)
        .filter(whole -> mismatch(whole, sent, observation).isEmpty())
        .flatMap(SglangLengthSentence::of)
        .map(SglangLengthSentence::errorClass);
  }

  /** The max_req_input_len the scheduler's refusal (S4) states. */
  @Override
  public Optional<Long> statedLimit(EngineResponse response) {
    return sentence(response).flatMap(SglangLengthSentence::schedulerLimit);
  }

  /** For SGLang's own sentence with numbers that are not this probe's: which ones. */
  @Override
  public Optional<String> fixFor(
      EngineResponse response, OverLimitPrompt prompt, PoolObservation observation) {
    return sentence(response)
        .flatMap(whole -> mismatch(whole, prompt, observation))
        .map(
            seen ->
                "it has the shape of SGLang's length refusal, but "
                    + seen
                    + ": the engine's limits are not those it reports (a proxy rewriting /v1/models"
                    + " or /server_info, another engine behind the port), so the check this prompt was"
                    + " sized for was not proven; compare the engine's /server_info and /v1/models with"
                    + " its launch arguments, probing the engine process itself");
  }

  private static Optional<String> mismatch(
      String whole, OverLimitPrompt sent, PoolObservation observation) {
    if (observation.engineContextTokens().isEmpty()) {
      return Optional.of("the pod reported no context length to check its numbers against");
    }
    long context = observation.engineContextTokens().getAsLong();
    return SglangLengthSentence.of(whole)
        .flatMap(form -> form.mismatch(whole, sent.tokens(), OUTPUT_TOKENS, context));
  }

  /**
   * The whole length sentence of an HTTP 400 with exactly the body SGLang writes ({@code {"error":
   * {"message": …}}} from the Python server, {@code {"error": {"message": …, "code": 400}}} from
   * the Rust front end, read strictly), the Rust front end's prefix removed; empty for anything
   * else.
   */
  private static Optional<String> sentence(EngineResponse response) {
    if (response.status() != 400) {
      return Optional.empty();
    }
    Optional<JsonNode> error =
        ErrorBodies.strictObject(response)
            .filter(body -> ErrorBodies.hasExactly(body, Set.of("error")))
            .flatMap(body -> ErrorBodies.child(body, "error"));
    Optional<String> message = error.flatMap(e -> ErrorBodies.text(e, "message"));
    if (message.isEmpty()) {
      return Optional.empty();
    }
    boolean python = ErrorBodies.hasExactly(error.get(), Set.of("message"));
    JsonNode code = error.get().get("code");
    boolean rust =
        ErrorBodies.hasExactly(error.get(), Set.of("message", "code"))
            && code.isIntegralNumber()
            && code.canConvertToInt()
            && code.intValue() == 400;
    String sentence = message.get();
    if (sentence.startsWith(RUST_VALIDATION)) {
      // Only the Rust front end prefixes, and only its two tokenizer checks.
      sentence = sentence.substring(RUST_VALIDATION.length());
      boolean tokenizers =
          SglangLengthSentence.of(sentence)
              .filter(form -> form != SglangLengthSentence.SCHEDULER)
              .isPresent();
      return rust && tokenizers ? Optional.of(sentence) : Optional.empty();
    }
    return (python || rust) && SglangLengthSentence.of(sentence).isPresent()
        ? Optional.of(sentence)
        : Optional.empty();
  }

  /**
   * The token IDs of SGLang's answer: {@code output_ids} (the generated tokens), and {@code
   * prompt_token_ids} where the request asked for them (kvguard does not). SGLang v0.5.18 {@code
   * python/sglang/srt/managers/tokenizer_manager.py:2382-2391} (a finished non-streamed request
   * answers {@code {"text", "output_ids", "meta_info"}}; {@code :2422-2426} without the tokenizer).
   * A prompt S4 stubbed out is run as one token, so its answer cannot echo its own marker; another
   * request's marker in it is evidence of that request's KV.
   */
  @Override
  public AnswerContent answerContent(EngineResponse response) {
    return AnswerContents.ofJsonObject(
        response,
        engineName(),
        body -> {
          Optional<long[]> output = AnswerContents.tokenIds(body, "output_ids");
          if (output.isEmpty()) {
            return new AnswerContent.Unreadable(
                "the answer has no output_ids list, which SGLang's /generate answers carry");
          }
          List<long[]> lists = new ArrayList<>(List.of(output.get()));
          AnswerContents.tokenIds(body, "prompt_token_ids").ifPresent(lists::add);
          return new AnswerContent.TokenIds(lists);
        });
  }

  @Override
  public boolean recognises(int status, String errorClass, PoolObservation observation) {
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
    return "SGLang's length refusal (HTTP 400 {\"error\": {\"message\": …}} whose message is the whole"
        + " sentence of its context-length, total-token or validate_input_length check, with the"
        + " prompt sent and the pod's context length)";
  }
}

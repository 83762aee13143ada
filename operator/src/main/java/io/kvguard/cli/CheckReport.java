package io.kvguard.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code check} found, as aligned text for people or JSON for pipelines; the same facts in
 * both.
 *
 * @param observation what the engine at --url reported; null when its probe failed, and through a
 *     proof router with registered workers (each worker's is in {@code workers})
 * @param workers with {@code --register-prefill}/{@code --register-decode}, each worker's pool
 *     check, registration and removal; else null
 */
record CheckReport(
    CheckCommand.Request request,
    PoolVerdict verdict,
    PoolObservation observation,
    CheckCommand.RejectionCheck rejection,
    List<RegisteredWorker> workers) {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  static CheckReport of(
      CheckCommand.Request request,
      ProbeOutcome outcome,
      PoolVerdict verdict,
      CheckCommand.RejectionCheck rejection) {
    PoolObservation seen =
        outcome instanceof ProbeOutcome.Observed observed ? observed.observation() : null;
    return new CheckReport(request, verdict, seen, rejection, null);
  }

  /** The proof through a proof router the workers were added to; --url reported nothing itself. */
  static CheckReport throughRouter(
      CheckCommand.Request request,
      PoolVerdict verdict,
      CheckCommand.RejectionCheck rejection,
      List<RegisteredWorker> workers) {
    return new CheckReport(request, verdict, null, rejection, List.copyOf(workers));
  }

  /**
   * refused, answered, inconclusive, failed, or "not run" (not asked for, or the pool check already
   * failed).
   */
  private String rejectionResult() {
    if (rejection == null) {
      return "not run";
    }
    RejectionOutcome outcome = rejection.outcome();
    return outcome instanceof RejectionOutcome.Refused
        ? "refused"
        : outcome instanceof RejectionOutcome.Answered
            ? "answered"
            : outcome instanceof RejectionOutcome.Inconclusive ? "inconclusive" : "failed";
  }

  private String rejectionLine() {
    if (rejection == null) {
      return request.rejection() == null
          ? "not run (--rejection-probe not given)"
          : workers != null
              ? "not run (a worker cannot be part of the proof: see message)"
              : "not run (the pool check did not pass)";
    }
    if (rejection.outcome() instanceof RejectionOutcome.Refused refused) {
      return RejectionJudge.refusal(refused);
    }
    return rejectionResult() + " (see message)";
  }

  int exitCode() {
    return switch (verdict.verdict()) {
      case Verified -> CheckCommand.EXIT_VERIFIED;
      case Refused -> CheckCommand.EXIT_REFUSED;
      case Unknown -> CheckCommand.EXIT_FAILED;
    };
  }

  private String outcomeWord() {
    return switch (verdict.verdict()) {
      case Verified ->
          rejection == null
              ? "VERIFIED: the pool holds the promised window"
              : workers != null
                  ? "VERIFIED: every worker's pool holds the promised window and the route refused"
                      + " every prompt"
                  : "VERIFIED: the pool holds the promised window and the engine refused the over-long prompt";
      case Refused -> "REFUSED: do not route traffic to this engine";
      case Unknown -> "PROBE FAILED: nothing trustworthy is known, treat as refused";
    };
  }

  String text() {
    StringBuilder text = new StringBuilder();
    line(
        text,
        "engine",
        request.engine().wireName()
            + (workers == null ? " at " : ", through the proof router at ")
            + request.baseUri());
    line(text, "verdict", verdict.verdict() + " (" + verdict.reason() + ")");
    if (workers != null) {
      for (RegisteredWorker worker : workers) {
        line(text, "worker", workerLine(worker));
      }
    } else if (observation != null) {
      line(text, "KV pool", observation.poolTokens() + " tokens");
      line(
          text,
          "engine context",
          observation.engineContextTokens().isPresent()
              ? observation.engineContextTokens().getAsLong() + " tokens"
              : "not reported");
      line(
          text,
          "engine version",
          observation.engineVersion() == null ? "not reported" : observation.engineVersion());
      line(
          text,
          "mode",
          observation.disaggregationMode() == null ? "unified" : observation.disaggregationMode());
    } else {
      line(text, "KV pool", "unknown (the probe failed)");
    }
    line(
        text,
        "policy",
        "context window "
            + request.policy().contextWindow()
            + " × min pool ratio "
            + request.policy().minPoolRatio()
            + (request.policy().allowEngineContextAbovePool()
                ? ", engine context above the pool allowed"
                : ""));
    line(text, "rejection", rejectionLine());
    line(text, "message", verdict.message());
    for (String note : notes()) {
      line(text, "note", note);
    }
    line(text, "result", outcomeWord() + " (exit " + exitCode() + ")");
    return text.toString();
  }

  private static String workerLine(RegisteredWorker worker) {
    PoolObservation seen = worker.observation();
    return worker.named().type()
        + " "
        + worker.named().url()
        + ": pool "
        + worker.pool().verdict()
        + " ("
        + worker.pool().reason()
        + (seen == null
            ? ""
            : ", KV pool "
                + seen.poolTokens()
                + " tokens, engine context "
                + (seen.engineContextTokens().isPresent()
                    ? seen.engineContextTokens().getAsLong() + " tokens"
                    : "not reported")
                + ", version "
                + (seen.engineVersion() == null ? "not reported" : seen.engineVersion())
                + ", mode "
                + (seen.disaggregationMode() == null ? "unified" : seen.disaggregationMode()))
        + "); "
        + (worker.workerId() == null
            ? worker.registration()
            : worker.registration() + " as worker " + worker.workerId())
        + (worker.registrationProblem() == null ? "" : " (" + worker.registrationProblem() + ")")
        + "; removal: "
        + worker.removal()
        + (worker.removalProblem() == null ? "" : " (" + worker.removalProblem() + ")");
  }

  /** Each worker as {@code --output json} lists it. */
  private static Map<String, Object> workerJson(RegisteredWorker worker) {
    PoolObservation seen = worker.observation();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("type", worker.named().type());
    body.put("url", worker.named().url().toString());
    body.put("verdict", worker.pool().verdict().name());
    body.put("reason", worker.pool().reason().name());
    body.put("message", worker.pool().message());
    putObservation(body, seen);
    body.put("notes", seen == null ? List.of() : seen.notes());
    body.put("workerId", worker.workerId());
    body.put("registration", worker.registration());
    body.put("registrationProblem", worker.registrationProblem());
    body.put("removal", worker.removal());
    body.put("removalProblem", worker.removalProblem());
    return body;
  }

  /** What an engine reported, each field null when its probe failed. */
  private static void putObservation(Map<String, Object> body, PoolObservation seen) {
    body.put("poolTokens", seen == null ? null : seen.poolTokens());
    body.put(
        "engineContextTokens",
        seen == null || seen.engineContextTokens().isEmpty()
            ? null
            : seen.engineContextTokens().getAsLong());
    body.put("engineVersion", seen == null ? null : seen.engineVersion());
    body.put("disaggregationMode", seen == null ? null : seen.disaggregationMode());
  }

  private static void line(StringBuilder text, String label, String value) {
    text.append(String.format("%-15s %s%n", label, value));
  }

  private List<String> notes() {
    return observation == null ? List.of() : observation.notes();
  }

  /** Null when --rejection-probe was not given; otherwise what was sent and what the engine did. */
  private Map<String, Object> rejectionJson() {
    if (request.rejection() == null) {
      return null;
    }
    Map<String, Object> probe = new LinkedHashMap<>();
    probe.put("result", rejectionResult());
    probe.put(
        "promptTokens",
        rejection == null || rejection.promptTokens() < 0 ? null : rejection.promptTokens());
    RejectionOutcome.Refused refused =
        rejection != null && rejection.outcome() instanceof RejectionOutcome.Refused r ? r : null;
    probe.put("refusalStatus", refused == null ? null : refused.status());
    probe.put("refusalError", refused == null ? null : refused.errorClass());
    return probe;
  }

  String json() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("engine", request.engine().wireName());
    body.put("url", request.baseUri().toString());
    body.put("contextWindow", request.policy().contextWindow());
    body.put("minPoolRatio", request.policy().minPoolRatio());
    body.put("allowEngineContextAbovePool", request.policy().allowEngineContextAbovePool());
    body.put("verdict", verdict.verdict().name());
    body.put("reason", verdict.reason().name());
    body.put("message", verdict.message());
    putObservation(body, observation);
    body.put("notes", notes());
    body.put("rejectionProbe", rejectionJson());
    body.put(
        "workers", workers == null ? null : workers.stream().map(CheckReport::workerJson).toList());
    body.put("exitCode", exitCode());
    try {
      return JSON.writeValueAsString(body) + System.lineSeparator();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings and numbers always serialises", e);
    }
  }
}

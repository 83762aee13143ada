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
 */
record CheckReport(
    CheckCommand.Request request,
    PoolVerdict verdict,
    PoolObservation observation,
    CheckCommand.RejectionCheck rejection) {
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  static CheckReport of(
      CheckCommand.Request request,
      ProbeOutcome outcome,
      PoolVerdict verdict,
      CheckCommand.RejectionCheck rejection) {
    PoolObservation seen =
        outcome instanceof ProbeOutcome.Observed observed ? observed.observation() : null;
    return new CheckReport(request, verdict, seen, rejection);
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
              : "VERIFIED: the pool holds the promised window and the engine refused the over-long prompt";
      case Refused -> "REFUSED: do not route traffic to this engine";
      case Unknown -> "PROBE FAILED: nothing trustworthy is known, treat as refused";
    };
  }

  String text() {
    StringBuilder text = new StringBuilder();
    line(text, "engine", request.engine().wireName() + " at " + request.baseUri());
    line(text, "verdict", verdict.verdict() + " (" + verdict.reason() + ")");
    if (observation != null) {
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
    body.put("poolTokens", observation == null ? null : observation.poolTokens());
    body.put(
        "engineContextTokens",
        observation == null || observation.engineContextTokens().isEmpty()
            ? null
            : observation.engineContextTokens().getAsLong());
    body.put("engineVersion", observation == null ? null : observation.engineVersion());
    body.put("disaggregationMode", observation == null ? null : observation.disaggregationMode());
    body.put("notes", notes());
    body.put("rejectionProbe", rejectionJson());
    body.put("exitCode", exitCode());
    try {
      return JSON.writeValueAsString(body) + System.lineSeparator();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings and numbers always serialises", e);
    }
  }
}

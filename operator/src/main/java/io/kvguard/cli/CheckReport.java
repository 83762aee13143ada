package io.kvguard.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What {@code check} found, as aligned text for people or JSON for pipelines; the same facts in both. */
record CheckReport(CheckCommand.Request request, PoolVerdict verdict, PoolObservation observation) {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  static CheckReport of(CheckCommand.Request request, ProbeOutcome outcome, PoolVerdict verdict) {
    PoolObservation seen = outcome instanceof ProbeOutcome.Observed observed ? observed.observation() : null;
    return new CheckReport(request, verdict, seen);
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
      case Verified -> "VERIFIED: the pool holds the promised window";
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
      line(text, "engine context", observation.engineContextTokens().isPresent()
          ? observation.engineContextTokens().getAsLong() + " tokens" : "not reported");
      line(text, "engine version", observation.engineVersion() == null ? "not reported" : observation.engineVersion());
      line(text, "mode", observation.disaggregationMode() == null ? "unified" : observation.disaggregationMode());
    } else {
      line(text, "KV pool", "unknown (the probe failed)");
    }
    line(text, "policy", "context window " + request.policy().contextWindow() + " × min pool ratio "
        + request.policy().minPoolRatio() + (request.policy().allowEngineContextAbovePool()
            ? ", engine context above the pool allowed" : ""));
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
    body.put("engineContextTokens", observation == null || observation.engineContextTokens().isEmpty()
        ? null : observation.engineContextTokens().getAsLong());
    body.put("engineVersion", observation == null ? null : observation.engineVersion());
    body.put("disaggregationMode", observation == null ? null : observation.disaggregationMode());
    body.put("notes", notes());
    body.put("exitCode", exitCode());
    try {
      return JSON.writeValueAsString(body) + System.lineSeparator();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings and numbers always serialises", e);
    }
  }
}

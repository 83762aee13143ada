package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.OllamaProbe;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Ollama in the fault table: no pool, so the bound under test is /api/ps models[].context_length
 * (the smallest of the loaded models), judged as context-length-only.
 */
final class OllamaFaultEngine implements FaultEngine {

  @Override
  public String name() {
    return "ollama";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new OllamaProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put("/api/ps", json(ps("2040000")));
    routes.put("/api/version", json("{\"version\":\"0.12.3\"}"));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/api/ps";
  }

  @Override
  public String poolContentType() {
    return "application/json";
  }

  @Override
  public byte[] poolBody() {
    return ps("2040000").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  /** One loaded model; the context length is a JSON literal, or {@link JsonLiterals#OMIT}. */
  static String model(String contextLength) {
    return "{\"name\":\"qwen3:8b\",\"model\":\"qwen3:8b\",\"size\":6223001600,\"digest\":\"500a1f06\","
        + "\"details\":{\"parent_model\":\"\",\"format\":\"gguf\",\"family\":\"qwen3\",\"families\":[\"qwen3\"],"
        + "\"parameter_size\":\"8.2B\",\"quantization_level\":\"Q4_K_M\"},"
        + JsonLiterals.field("context_length", contextLength)
        + "\"expires_at\":\"2318-08-15T10:12:44.5+00:00\",\"size_vram\":6223001600}";
  }

  static String ps(String... contextLengths) {
    return "{\"models\":["
        + Arrays.stream(contextLengths)
            .map(OllamaFaultEngine::model)
            .collect(Collectors.joining(","))
        + "]}";
  }

  private Optional<Fault> withPs(String body, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/api/ps", json(body));
    return Optional.of(new Fault(routes, cause));
  }

  private Optional<Fault> length(String literal, String cause) {
    return withPs(ps(literal), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    String field = "/api/ps models[0].context_length";
    switch (fault) {
      case WRONG_JSON_TYPE:
        return length("\"2040000\"", field + " is not a number (string)");
      case MISSING_POOL:
        return length(JsonLiterals.OMIT, "/api/ps models[0] reports no context_length");
      case NULL_POOL:
        return length("null", "/api/ps models[0] reports no context_length");
      case ZERO_POOL:
        return length("0", field + " is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return length("-2040000", field + " is -2040000, expected a positive token count");
      case FRACTIONAL_POOL:
        return length("2040000.5", field + " is not a whole number");
      case POOL_PAST_2_63:
        return length("9223372036854775808", field + " is larger than 2^63");
      case NAN:
        return length("NaN", "malformed JSON");
      case POSITIVE_INFINITY:
        return length("Infinity", "malformed JSON");
      case NEGATIVE_INFINITY:
        return length("-Infinity", "malformed JSON");
      case DUPLICATE_SERIES_DISAGREE:
        return length("2040000,\"context_length\":600000", "a key appears twice");
      case RANK_MISSING_CAPACITY:
        return withPs(
            ps("2040000", JsonLiterals.OMIT), "/api/ps models[1] reports no context_length");
      case TRUNCATED_CONTENT:
        {
          String whole = ps("2040000");
          return withPs(whole.substring(0, whole.indexOf("context_length") + 20), "malformed JSON");
        }
      case NO_MODELS:
        return withPs("{\"models\":[]}", "/api/ps lists no loaded model");
      default:
        return Optional.empty();
    }
  }
}

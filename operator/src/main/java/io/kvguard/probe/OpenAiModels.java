package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.OptionalLong;

/**
 * The engine's own context length from its OpenAI-compatible {@code GET /v1/models}
 * (max_model_len).
 */
final class OpenAiModels {
  static final String PATH = "/v1/models";

  private OpenAiModels() {}

  /** The smallest max_model_len over the served models; empty when no entry reports one. */
  static OptionalLong maxModelLen(EngineHttp http, EngineEndpoint endpoint) throws ProbeException {
    JsonNode root =
        StrictJson.requireObject(
            StrictJson.parse(http.getOk(endpoint, PATH, Reading.json("/data/*/max_model_len"))),
            PATH);
    JsonNode data = root.get("data");
    if (data == null || !data.isArray() || data.isEmpty()) {
      throw new ProbeException(PATH + " lists no models (data[] missing or empty)");
    }
    OptionalLong smallest = OptionalLong.empty();
    for (int i = 0; i < data.size(); i++) {
      OptionalLong length =
          StrictJson.optionalTokens(data.get(i), "max_model_len", PATH + " data[" + i + "]");
      if (length.isPresent() && (smallest.isEmpty() || length.getAsLong() < smallest.getAsLong())) {
        smallest = length;
      }
    }
    return smallest;
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Optional;

/**
 * Reads an engine's error answer as JSON when it is one; never throws and never quotes the body.
 */
final class ErrorBodies {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private ErrorBodies() {}

  /** The answer's top-level JSON object, or empty for any other content. */
  static Optional<JsonNode> object(EngineResponse response) {
    if (!response.isJson() || response.body().length == 0) {
      return Optional.empty();
    }
    try {
      JsonNode node = MAPPER.readTree(response.body());
      return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** {@code parent.field} when it is a string. */
  static Optional<String> text(JsonNode parent, String field) {
    JsonNode value = parent == null ? null : parent.get(field);
    return value != null && value.isTextual() ? Optional.of(value.asText()) : Optional.empty();
  }

  /** {@code parent.field} when it is an object. */
  static Optional<JsonNode> child(JsonNode parent, String field) {
    JsonNode value = parent == null ? null : parent.get(field);
    return value != null && value.isObject() ? Optional.of(value) : Optional.empty();
  }
}

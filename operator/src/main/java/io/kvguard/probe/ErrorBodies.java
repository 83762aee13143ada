package io.kvguard.probe;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.util.Optional;

/**
 * Reads an engine's error answer as JSON when it is one; never throws and never quotes the body.
 */
final class ErrorBodies {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * For bodies matched field by field: a key given twice or anything after the value is not what a
   * JSON encoder writes, so it is not read at all rather than read as its last copy.
   */
  private static final ObjectMapper STRICT =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

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

  /**
   * The answer's top-level JSON object, read strictly (no duplicate keys, nothing after it), or
   * empty.
   */
  static Optional<JsonNode> strictObject(EngineResponse response) {
    if (!response.isJson() || !response.complete() || response.body().length == 0) {
      return Optional.empty();
    }
    try {
      JsonNode node = STRICT.readTree(response.body());
      return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Whether {@code object} has exactly these fields, in any order. */
  static boolean hasExactly(JsonNode object, java.util.Set<String> fields) {
    java.util.Set<String> names = new java.util.HashSet<>();
    object.fieldNames().forEachRemaining(names::add);
    return names.equals(fields);
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

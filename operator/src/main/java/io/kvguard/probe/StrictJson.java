package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.OptionalLong;

/**
 * Reads engine JSON without guessing: token counts must be positive whole numbers that fit a long;
 * anything else (fraction, exponent, string, overflow, zero, negative) is an error that names the
 * field. The JSON itself was parsed as it streamed in, keeping only the paths the probe's {@link
 * Reading} named ({@link SelectiveJson}).
 */
final class StrictJson {

  private StrictJson() {}

  static JsonNode parse(EngineResponse response) throws ProbeException {
    if (!response.isJson()) {
      throw new ProbeException(
          "GET "
              + response.path()
              + " answered content type "
              + EngineText.safe(response.contentType())
              + ", expected JSON");
    }
    if (response.isEmpty()) {
      throw new ProbeException("GET " + response.path() + " answered an empty body");
    }
    JsonNode root = response.json();
    if (root == null) {
      throw new ProbeException("GET " + response.path() + " answered no JSON value");
    }
    return root;
  }

  static JsonNode requireObject(JsonNode node, String what) throws ProbeException {
    if (node == null || !node.isObject()) {
      throw new ProbeException(what + " is not a JSON object");
    }
    return node;
  }

  /** A positive token count, or empty when the field is absent or null. */
  static OptionalLong optionalTokens(JsonNode parent, String field, String where)
      throws ProbeException {
    JsonNode value = parent == null ? null : parent.get(field);
    if (value == null || value.isNull() || value.isMissingNode()) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(tokens(value, where + "." + field));
  }

  static long tokens(JsonNode value, String name) throws ProbeException {
    if (!value.isNumber()) {
      throw new ProbeException(
          name
              + " is not a number ("
              + value.getNodeType().name().toLowerCase(java.util.Locale.ROOT)
              + ")");
    }
    if (!value.isIntegralNumber()) {
      throw new ProbeException(name + " is not a whole number");
    }
    if (!value.canConvertToLong()) {
      throw new ProbeException(name + " is larger than 2^63");
    }
    long tokens = value.longValue();
    if (tokens <= 0) {
      throw new ProbeException(name + " is " + tokens + ", expected a positive token count");
    }
    return tokens;
  }

  static String optionalText(JsonNode parent, String field) {
    JsonNode value = parent == null ? null : parent.get(field);
    return value != null && value.isTextual() ? value.asText() : null;
  }
}

package io.kvguard.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ModelDeployment CRD's openAPIV3Schema (the one generated into the jar and committed in
 * crds/), applied to a document the way the API server's schema validation and kubectl's strict
 * field validation refuse it: unknown fields, types, int-or-string, enums, bounds, lengths,
 * patterns, list and map sizes, required fields. So {@code check --model-deployment} refuses what a
 * cluster would, instead of judging a spec it would never hold. Not applied: the
 * x-kubernetes-validations (CEL) rules (SpecProblems restates the one the verdict depends on,
 * blockCountIsPool per engine) and metadata, which the API server checks by its own rules.
 */
final class CrdSchema {
  static final String RESOURCE = "META-INF/fabric8/modeldeployments.kvguard.io-v1.yml";
  private static final JsonNode SCHEMA = load();

  private CrdSchema() {}

  /**
   * The first reason the API server would refuse the document, as "path: why"; empty when it fits
   * the schema.
   */
  static Optional<String> violation(JsonNode document) {
    JsonNode root = SCHEMA.path("properties");
    Iterator<Map.Entry<String, JsonNode>> fields = document.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      if (List.of("apiVersion", "kind", "metadata", "status").contains(field.getKey())) {
        continue; // the API server's own rules (the caller picked the kind); status is not written
        // by an apply
      }
      if (!root.has(field.getKey())) {
        return Optional.of(field.getKey() + ": unknown field");
      }
      Optional<String> problem = check(root.get(field.getKey()), field.getValue(), field.getKey());
      if (problem.isPresent()) {
        return problem;
      }
    }
    return Optional.empty();
  }

  private static Optional<String> check(JsonNode schema, JsonNode value, String path) {
    if (value.isNull()) {
      return Optional.empty(); // the API server prunes null values of fields that are not nullable
    }
    Optional<String> type = type(schema, value, path);
    if (type.isPresent()) {
      return type;
    }
    if (schema.has("enum")) {
      boolean listed = false;
      for (JsonNode allowed : schema.get("enum")) {
        listed |= allowed.equals(value);
      }
      if (!listed) {
        return Optional.of(path + ": Unsupported value: must be one of " + schema.get("enum"));
      }
    }
    if (value.isNumber()) {
      if (schema.has("minimum")
          && value.decimalValue().compareTo(schema.get("minimum").decimalValue()) < 0) {
        return Optional.of(
            path
                + ": Invalid value: "
                + value
                + ": should be greater than or equal to "
                + schema.get("minimum").asText());
      }
      if (schema.has("maximum")
          && value.decimalValue().compareTo(schema.get("maximum").decimalValue()) > 0) {
        return Optional.of(
            path
                + ": Invalid value: "
                + value
                + ": should be less than or equal to "
                + schema.get("maximum").asText());
      }
    }
    if (value.isTextual()) {
      int length = value.asText().codePointCount(0, value.asText().length());
      if (schema.has("maxLength") && length > schema.get("maxLength").asInt()) {
        return Optional.of(
            path + ": Too long: may not be longer than " + schema.get("maxLength").asInt());
      }
      if (schema.has("minLength") && length < schema.get("minLength").asInt()) {
        return Optional.of(
            path
                + ": Invalid value: should be at least "
                + schema.get("minLength").asInt()
                + " chars long");
      }
      if (schema.has("pattern") && !matches(schema.get("pattern").asText(), value.asText())) {
        return Optional.of(
            path + ": Invalid value: should match '" + schema.get("pattern").asText() + "'");
      }
    }
    if (value.isArray()) {
      if (schema.has("maxItems") && value.size() > schema.get("maxItems").asInt()) {
        return Optional.of(
            path
                + ": Too many: "
                + value.size()
                + ": must have at most "
                + schema.get("maxItems").asInt()
                + " items");
      }
      if (schema.has("minItems") && value.size() < schema.get("minItems").asInt()) {
        return Optional.of(
            path
                + ": Invalid value: should have at least "
                + schema.get("minItems").asInt()
                + " items");
      }
      for (int i = 0; i < value.size(); i++) {
        Optional<String> problem =
            schema.has("items")
                ? check(schema.get("items"), value.get(i), path + "[" + i + "]")
                : Optional.empty();
        if (problem.isPresent()) {
          return problem;
        }
      }
    }
    if (value.isObject()) {
      return object(schema, value, path);
    }
    return Optional.empty();
  }

  private static Optional<String> type(JsonNode schema, JsonNode value, String path) {
    if (schema.path("x-kubernetes-int-or-string").asBoolean(false)) {
      return value.isIntegralNumber() || value.isTextual()
          ? Optional.empty()
          : Optional.of(path + ": Invalid value: must be an integer or a string");
    }
    String type = schema.path("type").asText("");
    boolean fits =
        switch (type) {
          case "object" -> value.isObject();
          case "array" -> value.isArray();
          case "string" -> value.isTextual();
          case "integer" -> value.isIntegralNumber();
          case "number" -> value.isNumber();
          case "boolean" -> value.isBoolean();
          default -> true;
        };
    return fits ? Optional.empty() : Optional.of(path + ": Invalid value: must be of type " + type);
  }

  private static Optional<String> object(JsonNode schema, JsonNode value, String path) {
    if (schema.has("maxProperties") && value.size() > schema.get("maxProperties").asInt()) {
      return Optional.of(
          path + ": Too many: must have at most " + schema.get("maxProperties").asInt() + " items");
    }
    for (JsonNode required : schema.path("required")) {
      if (value.path(required.asText()).isMissingNode() || value.get(required.asText()).isNull()) {
        return Optional.of(path + "." + required.asText() + ": Required value");
      }
    }
    boolean keepsUnknown = schema.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
    Iterator<Map.Entry<String, JsonNode>> fields = value.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      JsonNode fieldSchema = schema.path("properties").get(field.getKey());
      if (fieldSchema == null
          && schema.get("additionalProperties") != null
          && schema.get("additionalProperties").isObject()) {
        fieldSchema = schema.get("additionalProperties");
      }
      if (fieldSchema == null) {
        if (keepsUnknown) {
          continue;
        }
        return Optional.of(path + "." + field.getKey() + ": unknown field");
      }
      Optional<String> problem = check(fieldSchema, field.getValue(), path + "." + field.getKey());
      if (problem.isPresent()) {
        return problem;
      }
    }
    return Optional.empty();
  }

  /**
   * As Go's regexp (RE2) matches: its $ is the end of the text, where Java's $ also allows a final
   * line break.
   */
  private static boolean matches(String pattern, String text) {
    Matcher matcher = Pattern.compile(pattern).matcher(text);
    while (matcher.find()) {
      if (!pattern.endsWith("$") || matcher.end() == text.length()) {
        return true;
      }
    }
    return false;
  }

  private static JsonNode load() {
    try (InputStream in = CrdSchema.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing from the jar");
      }
      JsonNode crd = new ObjectMapper(new YAMLFactory()).readTree(in);
      return crd.at("/spec/versions/0/schema/openAPIV3Schema");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

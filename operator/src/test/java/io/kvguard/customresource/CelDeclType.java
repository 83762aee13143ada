package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a real API server knows about a schema node when it estimates a rule's cost: the node's CEL
 * type, the most elements (list items, map entries, string bytes) it can hold, and its smallest
 * JSON serialization. Re-states {@code SchemaDeclType} of kubernetes/apiserver v0.36.3 (Kubernetes
 * 1.36), {@code pkg/cel/common/schemas.go}, with the sizes of {@code pkg/cel/types.go} and {@code
 * pkg/cel/limits.go}.
 */
final class CelDeclType {
  /** {@code celconfig.MaxRequestSizeBytes} (apiserver pkg/apis/cel/config.go): 3 MiB. */
  static final long MAX_REQUEST_SIZE_BYTES = 3L * 1024 * 1024;

  /**
   * The longest string or int-or-string without maxLength: the request less the two quotes
   * (3,145,726).
   */
  static final long UNBOUNDED_STRING = MAX_REQUEST_SIZE_BYTES - 2;

  enum Kind {
    OBJECT,
    LIST,
    MAP,
    STRING,
    BYTES,
    INT,
    DOUBLE,
    BOOL,
    INT_OR_STRING,
    UNMODELLED
  }

  final Kind kind;
  final Map<String, CelDeclType> fields;
  final CelDeclType elem;
  final CelDeclType key;

  /** DeclType.MaxElements: list items, map entries, string bytes (0 for scalars and objects). */
  final long maxElements;

  /** DeclType.MinSerializedSize. */
  final long minSerializedSize;

  /**
   * Why a node is not modelled (formats this estimator does not know); reading it fails the
   * estimate.
   */
  final String unmodelled;

  private CelDeclType(
      Kind kind,
      Map<String, CelDeclType> fields,
      CelDeclType elem,
      CelDeclType key,
      long maxElements,
      long minSerializedSize,
      String unmodelled) {
    this.kind = kind;
    this.fields = fields;
    this.elem = elem;
    this.key = key;
    this.maxElements = maxElements;
    this.minSerializedSize = minSerializedSize;
    this.unmodelled = unmodelled;
  }

  private static CelDeclType simple(Kind kind, long maxElements, long minSize) {
    return new CelDeclType(kind, Map.of(), null, null, maxElements, minSize, null);
  }

  /** apiservercel.StringType, the key type of every map: MaxElements is left at 0 there. */
  private static final CelDeclType MAP_KEY = simple(Kind.STRING, 0, 2);

  /**
   * SchemaDeclType(s, isResourceRoot); null where the API server does not expose the node to CEL.
   */
  static CelDeclType of(JsonNode s, boolean isResourceRoot) {
    if (s == null || s.isMissingNode()) {
      return null;
    }
    if (s.path("x-kubernetes-int-or-string").asBoolean(false)) {
      // "smallest value for a serialized x-kubernetes-int-or-string is 0";
      // estimateMaxElementsFromMaxLength
      // multiplies maxLength by 4 (a code point is up to 4 bytes), else
      // estimateMaxStringLengthPerRequest.
      long max =
          s.has("maxLength") ? Math.max(0, s.get("maxLength").asLong()) * 4 : UNBOUNDED_STRING;
      return simple(Kind.INT_OR_STRING, max, 1);
    }
    String type = s.path("type").asText("");
    switch (type) {
      case "array":
        {
          CelDeclType items =
              of(
                  s.get("items"),
                  s.path("items").path("x-kubernetes-embedded-resource").asBoolean(false));
          if (items == null) {
            return null;
          }
          // estimateMaxArrayItemsFromMinSize: (maxRequestSizeBytes - 2) / (minSize + 1)
          long max =
              s.has("maxItems")
                  ? Math.max(0, s.get("maxItems").asLong())
                  : (MAX_REQUEST_SIZE_BYTES - 2) / (items.minSerializedSize + 1);
          return new CelDeclType(Kind.LIST, Map.of(), items, null, max, 2, null);
        }
      case "object":
        {
          JsonNode additional = s.get("additionalProperties");
          if (additional != null && additional.isObject()) {
            CelDeclType values =
                of(additional, additional.path("x-kubernetes-embedded-resource").asBoolean(false));
            if (values == null) {
              return null;
            }
            // estimateMaxAdditionalPropertiesFromMinSize: (maxRequestSizeBytes - 2) / (minSize + 6)
            long max =
                s.has("maxProperties")
                    ? Math.max(0, s.get("maxProperties").asLong())
                    : (MAX_REQUEST_SIZE_BYTES - 2) / (values.minSerializedSize + 6);
            return new CelDeclType(Kind.MAP, Map.of(), values, MAP_KEY, max, 2, null);
          }
          Map<String, CelDeclType> fields = new LinkedHashMap<>();
          long minSize = 2;
          JsonNode properties = s.path("properties");
          var names = properties.fieldNames();
          while (names.hasNext()) {
            String name = names.next();
            JsonNode property = properties.get(name);
            CelDeclType field =
                of(property, property.path("x-kubernetes-embedded-resource").asBoolean(false));
            if (field == null) {
              continue;
            }
            fields.put(name, field);
            boolean required = false;
            for (JsonNode r : s.path("required")) {
              required |= r.asText().equals(name);
            }
            // only required properties without a default count: defaults are filled in server-side
            if (required && !property.has("default")) {
              minSize += name.length() + field.minSerializedSize + 4;
            }
          }
          if (isResourceRoot) {
            // WithTypeAndObjectMeta: kind, apiVersion, metadata.name and metadata.generateName
            // (none required).
            CelDeclType string = of(stringSchema(), false);
            fields.putIfAbsent("kind", string);
            fields.putIfAbsent("apiVersion", string);
            fields.putIfAbsent(
                "metadata",
                new CelDeclType(
                    Kind.OBJECT,
                    Map.of("name", string, "generateName", string),
                    null,
                    null,
                    0,
                    2,
                    null));
          }
          return new CelDeclType(Kind.OBJECT, fields, null, null, 0, minSize, null);
        }
      case "string":
        {
          String format = s.path("format").asText("");
          if (java.util.Set.of("byte", "duration", "date", "date-time").contains(format)) {
            return new CelDeclType(
                Kind.UNMODELLED,
                Map.of(),
                null,
                null,
                0,
                2,
                "string format " + format + " (its CEL type and size are not modelled here)");
          }
          long max;
          if (s.has("maxLength")) {
            max = Math.max(0, s.get("maxLength").asLong()) * 4;
          } else if (s.has("enum") && s.get("enum").size() > 0) {
            // estimateMaxStringEnumLength: the longest value, in bytes
            max = 0;
            for (JsonNode value : s.get("enum")) {
              max = Math.max(max, value.asText().getBytes(StandardCharsets.UTF_8).length);
            }
          } else {
            max = UNBOUNDED_STRING;
          }
          return simple(Kind.STRING, max, 2);
        }
      case "boolean":
        return simple(Kind.BOOL, 0, 4);
      case "number":
        return simple(Kind.DOUBLE, 0, 1);
      case "integer":
        return simple(Kind.INT, 0, 1);
      default:
        return null;
    }
  }

  private static JsonNode stringSchema() {
    return JsonNodeFactory.instance.objectNode().put("type", "string");
  }
}

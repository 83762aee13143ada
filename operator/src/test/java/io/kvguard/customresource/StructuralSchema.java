package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The structural-schema rules a real API server applies to a CRD before it stores it, for the parts
 * kvguard's CRD uses; re-stated from kubernetes/apiextensions-apiserver v0.36.3: {@code
 * pkg/apiserver/schema/validation.go} (validateStructuralInvariants: a type everywhere, the
 * int-or-string form the only place anyOf may appear, with nothing but a type inside it; metadata
 * restricted to name and generateName) and {@code pkg/apis/apiextensions/validation/validation.go}
 * (list-type map: keys name scalar properties of object items, each required or defaulted and not
 * nullable; validateMapListKeysMapSet).
 */
final class StructuralSchema {
  private static final Set<String> TYPES =
      Set.of("object", "array", "string", "integer", "number", "boolean");
  private static final Set<String> JUNCTORS = Set.of("anyOf", "allOf", "oneOf", "not");

  private StructuralSchema() {}

  /** Every violation, each naming its path; empty for a structural schema. */
  static List<String> violations(JsonNode openApiV3Schema) {
    List<String> problems = new ArrayList<>();
    check(openApiV3Schema, "", true, problems);
    return problems;
  }

  private static void check(JsonNode s, String path, boolean root, List<String> problems) {
    String at = path.isEmpty() ? "<root>" : path;
    boolean intOrString = s.path("x-kubernetes-int-or-string").asBoolean(false);
    if (intOrString) {
      JsonNode anyOf = s.path("anyOf");
      boolean canonical =
          anyOf.size() == 2
              && anyOf.get(0).size() == 1
              && anyOf.get(1).size() == 1
              && anyOf.get(0).path("type").asText().equals("integer")
              && anyOf.get(1).path("type").asText().equals("string");
      if (!canonical) {
        problems.add(
            at
                + ": x-kubernetes-int-or-string needs exactly anyOf [{type: integer}, {type: string}]");
      }
      if (s.has("type")) {
        problems.add(at + ": an int-or-string has no type of its own");
      }
    } else if (!TYPES.contains(s.path("type").asText(""))) {
      problems.add(at + ": type must be specified (one of " + TYPES + ")");
    }
    for (String junctor : JUNCTORS) {
      if (s.has(junctor) && !(intOrString && junctor.equals("anyOf"))) {
        problems.add(at + ": " + junctor + " outside the int-or-string form");
      }
    }
    if (s.has("nullable") && s.get("nullable").asBoolean()) {
      problems.add(at + ": nullable (kvguard's schema never needs it)");
    }
    if (root && s.path("properties").has("metadata")) {
      s.path("properties")
          .get("metadata")
          .path("properties")
          .fieldNames()
          .forEachRemaining(
              name -> {
                if (!name.equals("name") && !name.equals("generateName")) {
                  problems.add(
                      at + ": metadata may restrict only name and generateName, not " + name);
                }
              });
    }
    if (s.has("properties") && s.has("additionalProperties")) {
      problems.add(at + ": properties and additionalProperties together");
    }
    if (root && s.has("additionalProperties")) {
      problems.add(at + ": additionalProperties at the root");
    }
    if (s.path("type").asText("").equals("array") && !s.path("items").isObject()) {
      problems.add(at + ": an array needs one items schema");
    }
    listMap(s, at, problems);
    s.path("properties")
        .fieldNames()
        .forEachRemaining(
            name -> check(s.path("properties").get(name), path + "." + name, false, problems));
    if (s.path("additionalProperties").isObject()) {
      check(s.get("additionalProperties"), path + "[*]", false, problems);
    }
    if (s.path("items").isObject()) {
      check(s.get("items"), path + "[]", false, problems);
    }
  }

  private static void listMap(JsonNode s, String at, List<String> problems) {
    String listType = s.path("x-kubernetes-list-type").asText("");
    JsonNode keys = s.path("x-kubernetes-list-map-keys");
    if (keys.size() > 0 && !listType.equals("map")) {
      problems.add(at + ": x-kubernetes-list-map-keys needs x-kubernetes-list-type: map");
    }
    if (!listType.equals("map")) {
      return;
    }
    JsonNode items = s.path("items");
    if (keys.size() == 0) {
      problems.add(at + ": x-kubernetes-list-type map needs x-kubernetes-list-map-keys");
    }
    if (!items.path("type").asText().equals("object")) {
      problems.add(at + ": a list-map's items must be objects");
      return;
    }
    for (JsonNode key : keys) {
      String name = key.asText();
      JsonNode property = items.path("properties").path(name);
      if (property.isMissingNode()) {
        problems.add(at + ": list-map key " + name + " is not a property of the items");
        continue;
      }
      String type = property.path("type").asText("");
      if (type.equals("object") || type.equals("array")) {
        problems.add(at + ": list-map key " + name + " must be a scalar");
      }
      boolean required = false;
      for (JsonNode r : items.path("required")) {
        required |= r.asText().equals(name);
      }
      if (!required && !property.has("default")) {
        problems.add(at + ": list-map key " + name + " must be required or have a default");
      }
      if (property.path("nullable").asBoolean(false)) {
        problems.add(at + ": list-map key " + name + " cannot be nullable");
      }
    }
  }
}

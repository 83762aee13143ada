package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Schema keywords fabric8's CRD generator (7.5.2) has no annotation for, added to the generated CRD
 * by the build (CrdPostProcessor): role names as list-map keys, and bounds on an IntOrString and
 * inside the LabelSelector model class, the maximum of the Condition class's generation. A path
 * that no longer exists fails the build, so a renamed field cannot silently lose its bound.
 */
final class SchemaAdditions {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SPEC = "/properties/spec/properties";
  private static final String CONDITION =
      "/properties/status/properties/conditions/items/properties";
  private static final String ROLE = SPEC + "/roles/items/properties";
  private static final String SELECTOR = ROLE + "/selector/properties";
  private static final String EXPRESSION = SELECTOR + "/matchExpressions/items/properties";

  /** Where (a JSON pointer into openAPIV3Schema) and what. */
  record Addition(String path, Map<String, Object> keywords) {}

  private static final Map<String, Object> PORT =
      Map.of(
          "maxLength",
          SchemaBounds.PORT_NAME,
          "minimum",
          1,
          "maximum",
          65535,
          "pattern",
          "^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$");

  static final List<Addition> ADDITIONS =
      List.of(
          // Role names are unique because they are the keys of a list-map: the API server refuses a
          // duplicate ("Duplicate value") without any CEL rule; a rule comparing every pair of
          // roles cost more than a real API server admits (issue 17).
          new Addition(
              SPEC + "/roles",
              Map.of(
                  "x-kubernetes-list-type", "map", "x-kubernetes-list-map-keys", List.of("name"))),
          // A port is 1-65535 or an IANA service name, said with OpenAPI keywords (minimum and
          // maximum apply to its integer form, pattern and maxLength to its string form) rather
          // than a CEL rule: Kubernetes before 1.34 sizes an int-or-string as 3 MiB whatever its
          // maxLength (kubernetes/apiserver v0.33.0 pkg/cel/common/schemas.go), which prices a
          // matches() on it above the per-rule limit under the role list.
          new Addition(ROLE + "/port", PORT),
          new Addition(ROLE + "/metricsPort", PORT),
          new Addition(
              SELECTOR + "/matchLabels", Map.of("maxProperties", SchemaBounds.SELECTOR_LABELS)),
          new Addition(
              SELECTOR + "/matchLabels/additionalProperties",
              Map.of("maxLength", SchemaBounds.LABEL_VALUE)),
          new Addition(
              SELECTOR + "/matchExpressions",
              Map.of("maxItems", SchemaBounds.SELECTOR_EXPRESSIONS)),
          new Addition(EXPRESSION + "/key", Map.of("maxLength", SchemaBounds.LABEL_KEY)),
          new Addition(
              EXPRESSION + "/operator", Map.of("maxLength", SchemaBounds.SELECTOR_OPERATOR)),
          new Addition(EXPRESSION + "/values", Map.of("maxItems", SchemaBounds.SELECTOR_VALUES)),
          new Addition(EXPRESSION + "/values/items", Map.of("maxLength", SchemaBounds.LABEL_VALUE)),
          // fabric8's Condition class: its generation is a long like any other (issue 29).
          new Addition(CONDITION + "/observedGeneration", Map.of("maximum", SchemaBounds.LONG)));

  private SchemaAdditions() {}

  /** Adds every keyword in place; keys stay sorted as the generator writes them. */
  static void apply(JsonNode openApiV3Schema) {
    for (Addition addition : ADDITIONS) {
      JsonNode target = openApiV3Schema.at(addition.path());
      if (!(target instanceof ObjectNode node)) {
        throw new IllegalStateException(
            "generated CRD has no schema at "
                + addition.path()
                + ": the Java classes changed; update SchemaAdditions");
      }
      addition.keywords().forEach((keyword, value) -> node.set(keyword, JSON.valueToTree(value)));
      sortFields(node);
    }
  }

  private static void sortFields(ObjectNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    names.sort(null);
    ObjectNode sorted = node.objectNode();
    names.forEach(name -> sorted.set(name, node.get(name)));
    node.removeAll();
    node.setAll(sorted);
  }
}

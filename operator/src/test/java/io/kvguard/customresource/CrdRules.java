package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a real API server would reject, approximated without one: the generated CRD's
 * openAPIV3Schema checked with a JSON-schema validator (types, bounds, enums, required, patterns),
 * every x-kubernetes-validations rule evaluated with CEL against the value at its place, and
 * list-map keys unique. Unknown fields are not caught (no pruning here).
 */
final class CrdRules {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final CelCompiler CEL =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(dev.cel.parser.CelStandardMacro.STANDARD_MACROS)
          .addVar("self", SimpleType.DYN)
          .build();
  private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

  private final JsonNode openApiSchema;
  private final Schema schema;

  CrdRules(Path crd) throws IOException {
    JsonNode root = YAML.readTree(Files.readString(crd));
    openApiSchema = root.at("/spec/versions/0/schema/openAPIV3Schema");
    schema =
        SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4)
            .getSchema(JSON.writeValueAsString(openApiSchema), InputFormat.JSON);
  }

  /** Every reason the document would be rejected; empty when it would be admitted. */
  List<String> violations(String yamlDocument) throws IOException {
    JsonNode document = YAML.readTree(yamlDocument);
    List<String> problems = new ArrayList<>();
    schema
        .validate(JSON.writeValueAsString(document), InputFormat.JSON)
        .forEach(e -> problems.add(e.toString()));
    celRules(openApiSchema, document, "", problems);
    return problems;
  }

  private static void celRules(
      JsonNode schema, JsonNode value, String path, List<String> problems) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      return;
    }
    for (JsonNode rule : schema.path("x-kubernetes-validations")) {
      String expression = rule.path("rule").asText();
      Object result;
      try {
        CelAbstractSyntaxTree ast = CEL.compile(expression).getAst();
        result = RUNTIME.createProgram(ast).eval(Map.of("self", toCel(value)));
      } catch (Exception e) {
        // A rule that cannot evaluate on this value is a rejection on a real API server too.
        result = "error: " + e.getMessage();
      }
      if (!Boolean.TRUE.equals(result)) {
        problems.add(path + ": " + rule.path("message").asText(expression) + " (" + result + ")");
      }
    }
    if (value.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = schema.path("properties").fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        celRules(
            field.getValue(), value.get(field.getKey()), path + "." + field.getKey(), problems);
      }
    } else if (value.isArray()) {
      listMapKeys(schema, value, path, problems);
      for (int i = 0; i < value.size(); i++) {
        celRules(schema.path("items"), value.get(i), path + "[" + i + "]", problems);
      }
    }
  }

  /**
   * A list-map admits each key tuple once: kubernetes/apiextensions-apiserver v0.36.3
   * pkg/apiserver/schema/listtype/validation.go (validateListMap) answers "Duplicate value" for the
   * second.
   */
  private static void listMapKeys(
      JsonNode schema, JsonNode list, String path, List<String> problems) {
    if (!schema.path("x-kubernetes-list-type").asText().equals("map")) {
      return;
    }
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < list.size(); i++) {
      Map<String, JsonNode> key = new LinkedHashMap<>();
      for (JsonNode name : schema.path("x-kubernetes-list-map-keys")) {
        key.put(name.asText(), list.get(i).path(name.asText()));
      }
      if (!seen.add(key.toString())) {
        problems.add(path + "[" + i + "]: Duplicate value: " + key);
      }
    }
  }

  /** CEL's view of JSON: integers as Long, as the API server passes them. */
  private static Object toCel(JsonNode node) {
    if (node.isIntegralNumber()) {
      return node.longValue();
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>();
      node.forEach(item -> list.add(toCel(item)));
      return list;
    }
    Map<String, Object> map = new LinkedHashMap<>();
    node.fields().forEachRemaining(e -> map.put(e.getKey(), toCel(e.getValue())));
    return map;
  }
}

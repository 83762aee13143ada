package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A rendered ValidatingAdmissionPolicy whose CEL is evaluated with dev.cel as the API server
 * evaluates it: matchConditions, then the variables in order, then every validation (one false
 * validation refuses the request, with its messageExpression or message). The mock API server of
 * the other tests enforces no admission policy, so this is where the chart's policies are checked.
 */
final class EvaluatedPolicy {
  private static final YAMLMapper YAML = new YAMLMapper();
  private static final CelCompiler CEL =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .addVar("request", SimpleType.DYN)
          .addVar("variables", SimpleType.DYN)
          .build();
  private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

  private final JsonNode policy;

  EvaluatedPolicy(JsonNode policy) {
    this.policy = policy;
  }

  JsonNode tree() {
    return policy;
  }

  /**
   * Whether matchConstraints send the API server's request to this policy at all: an operation
   * ({@code CREATE}, {@code UPDATE}, {@code DELETE}, ...) on a resource such as {@code pods} or
   * {@code pods/status}.
   */
  boolean constrains(String operation, String resource) {
    for (JsonNode rule : policy.at("/spec/matchConstraints/resourceRules")) {
      boolean operationMatches = false;
      for (JsonNode op : rule.path("operations")) {
        operationMatches |= op.asText().equals("*") || op.asText().equals(operation);
      }
      for (JsonNode r : rule.path("resources")) {
        String base = resource.contains("/") ? resource.substring(0, resource.indexOf('/')) : "";
        boolean resourceMatches =
            r.asText().equals(resource) || !base.isEmpty() && r.asText().equals(base + "/*");
        if (operationMatches && resourceMatches) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether every matchCondition holds: the policy applies to the request. */
  boolean matches(Map<String, Object> activation) {
    for (JsonNode condition : policy.at("/spec/matchConditions")) {
      if (!Boolean.TRUE.equals(eval(condition.path("expression").asText(), activation))) {
        return false;
      }
    }
    return true;
  }

  /** The messages of the validations that refuse the request (empty: admitted). */
  List<String> refusals(Map<String, Object> activation) {
    assertThat(matches(activation)).as("the policy applies to the request").isTrue();
    Map<String, Object> variables = new HashMap<>();
    Map<String, Object> scope = new HashMap<>(activation);
    scope.put("variables", variables);
    for (JsonNode variable : policy.at("/spec/variables")) {
      variables.put(
          variable.path("name").asText(), eval(variable.path("expression").asText(), scope));
    }
    List<String> refused = new ArrayList<>();
    for (JsonNode validation : policy.at("/spec/validations")) {
      Object result = eval(validation.path("expression").asText(), scope);
      assertThat(result)
          .as("%s evaluates to a bool", validation.path("expression").asText())
          .isInstanceOf(Boolean.class);
      if (!(Boolean) result) {
        refused.add(
            validation.has("messageExpression")
                ? (String) eval(validation.path("messageExpression").asText(), scope)
                : validation.path("message").asText());
      }
    }
    return refused;
  }

  private static Object eval(String expression, Map<String, Object> activation) {
    try {
      return RUNTIME.createProgram(CEL.compile(expression).getAst()).eval(activation);
    } catch (Exception e) {
      throw new AssertionError("CEL " + expression + ": " + e.getMessage(), e);
    }
  }

  /**
   * An admission request as the policy sees it. {@code request.name} is the object's name (for a
   * subresource, the parent's).
   */
  static Map<String, Object> request(
      String operation, String subResource, String user, JsonNode object, JsonNode oldObject) {
    JsonNode named = object != null ? object : oldObject;
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("operation", operation);
    request.put("subResource", subResource);
    request.put("name", named == null ? "" : named.at("/metadata/name").asText());
    request.put("userInfo", Map.of("username", user));
    Map<String, Object> activation = new HashMap<>();
    activation.put("request", request);
    activation.put("object", toCel(object));
    activation.put("oldObject", toCel(oldObject));
    return activation;
  }

  /** An UPDATE of {@code old} changed by {@code change}. */
  static Map<String, Object> update(
      String old, Consumer<ObjectNode> change, String subResource, String user) {
    return request("UPDATE", subResource, user, changed(old, change), parse(old));
  }

  static ObjectNode changed(String yaml, Consumer<ObjectNode> change) {
    ObjectNode copy = (ObjectNode) parse(yaml);
    change.accept(copy);
    return copy;
  }

  static JsonNode parse(String yaml) {
    try {
      return YAML.readTree(yaml);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String write(JsonNode node) {
    try {
      return YAML.writeValueAsString(node);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** CEL's view of the JSON the API server decodes: integers as Long; absent as null. */
  private static Object toCel(JsonNode node) {
    if (node == null || node.isNull()) {
      return dev.cel.common.values.NullValue.NULL_VALUE;
    }
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

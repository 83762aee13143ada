package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every integer the CRD admits fits the Java field kvguard reads it into (issue 29: a stored
 * minReadyPods of 3000000000 made the informer fail and the operator stop for every tenant). The
 * generated schema is walked together with the Java classes, nested classes, lists and maps
 * included, so a new integer field without a maximum fails here.
 */
class CrdIntegerBoundsTest {
  private static JsonNode schema;

  @BeforeAll
  static void loadCrd() throws IOException {
    schema =
        new ObjectMapper(new YAMLFactory())
            .readTree(
                Files.readString(
                    Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")))
            .at("/spec/versions/0/schema/openAPIV3Schema/properties");
  }

  @Test
  void everyIntegerOfTheSpecHasAMaximumItsJavaFieldHolds() {
    List<String> problems = new ArrayList<>();
    List<String> integers = new ArrayList<>();
    walk(schema.get("spec"), ModelDeploymentSpec.class, "spec", integers, problems);
    assertThat(integers).contains("spec.roles[].minReadyPods", "spec.contextWindow");
    assertThat(problems).isEmpty();
  }

  @Test
  void everyIntegerOfTheStatusHasAMaximumItsJavaFieldHolds() {
    List<String> problems = new ArrayList<>();
    List<String> integers = new ArrayList<>();
    walk(schema.get("status"), ModelDeploymentStatus.class, "status", integers, problems);
    assertThat(integers)
        .contains("status.roles[].podsByReason{}", "status.conditions[].observedGeneration");
    assertThat(problems).isEmpty();
  }

  @Test
  void theWalkFindsAMissingOrTooLargeMaximum() {
    ObjectMapper json = new ObjectMapper();
    JsonNode unbounded =
        json.createObjectNode()
            .set(
                "properties",
                json.createObjectNode().set("n", json.createObjectNode().put("type", "integer")));
    JsonNode tooLarge =
        json.createObjectNode()
            .set(
                "properties",
                json.createObjectNode()
                    .set(
                        "n", json.createObjectNode().put("type", "integer").put("maximum", 3.0e9)));
    List<String> problems = new ArrayList<>();
    walk(unbounded, IntHolder.class, "x", new ArrayList<>(), problems);
    walk(tooLarge, IntHolder.class, "x", new ArrayList<>(), problems);
    assertThat(problems).hasSize(2);
    assertThat(problems.get(0)).contains("x.n has no maximum");
    assertThat(problems.get(1)).contains("x.n: maximum 3.0E+9 exceeds");
  }

  static class IntHolder {
    Integer n;
  }

  private static void walk(
      JsonNode node, Type javaType, String path, List<String> integers, List<String> problems) {
    if (isInteger(node)) {
      integers.add(path);
      checkMaximum(node, javaType, path, problems);
      return;
    }
    if ("number".equals(node.path("type").asText())) {
      // A double as large as 1e308 reads fine and makes window x ratio infinite: a bound keeps the
      // arithmetic finite.
      if (!node.has("maximum")) {
        problems.add(path + " is a number without a maximum");
      }
      return;
    }
    if (node.has("items")) {
      walk(node.get("items"), typeArgument(javaType, 0, path), path + "[]", integers, problems);
    }
    if (node.has("additionalProperties")) {
      walk(
          node.get("additionalProperties"),
          typeArgument(javaType, 1, path),
          path + "{}",
          integers,
          problems);
    }
    Iterator<Map.Entry<String, JsonNode>> properties = node.path("properties").fields();
    while (properties.hasNext()) {
      Map.Entry<String, JsonNode> property = properties.next();
      String child = path + "." + property.getKey();
      Field field = field(raw(javaType), property.getKey());
      if (field == null) {
        problems.add(child + ": no Java field of " + raw(javaType).getName() + " holds it");
        continue;
      }
      walk(property.getValue(), field.getGenericType(), child, integers, problems);
    }
  }

  /** An integer, or an int-or-string's integer form. */
  private static boolean isInteger(JsonNode node) {
    if ("integer".equals(node.path("type").asText())) {
      return true;
    }
    for (JsonNode choice : node.path("anyOf")) {
      if ("integer".equals(choice.path("type").asText())) {
        return true;
      }
    }
    return false;
  }

  private static void checkMaximum(
      JsonNode node, Type javaType, String path, List<String> problems) {
    BigDecimal holds;
    if (javaType == Integer.class || javaType == int.class || javaType == IntOrString.class) {
      holds = BigDecimal.valueOf(Integer.MAX_VALUE);
    } else if (javaType == Long.class || javaType == long.class) {
      holds = BigDecimal.valueOf(Long.MAX_VALUE);
    } else {
      problems.add(path + ": an integer in the schema, but Java reads it into " + javaType);
      return;
    }
    if (!node.has("maximum")) {
      problems.add(path + " has no maximum (its Java field holds at most " + holds + ")");
      return;
    }
    BigDecimal maximum = new BigDecimal(node.get("maximum").asText());
    if (maximum.compareTo(holds) > 0) {
      problems.add(path + ": maximum " + maximum + " exceeds what its Java field holds, " + holds);
    }
  }

  private static Type typeArgument(Type type, int index, String path) {
    if (type instanceof ParameterizedType parameterized) {
      Type[] arguments = parameterized.getActualTypeArguments();
      return arguments[Math.min(index, arguments.length - 1)];
    }
    throw new AssertionError(path + ": a list or map in the schema, but " + type + " in Java");
  }

  private static Class<?> raw(Type type) {
    return type instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) type;
  }

  /** The field a JSON property is read into: by @JsonProperty name or field name. */
  private static Field field(Class<?> type, String name) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      for (Field field : c.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers())
            || field.isAnnotationPresent(JsonIgnore.class)) {
          continue;
        }
        JsonProperty property = field.getAnnotation(JsonProperty.class);
        String json =
            property != null && !property.value().isEmpty() ? property.value() : field.getName();
        if (json.equals(name)) {
          return field;
        }
      }
    }
    return null;
  }
}

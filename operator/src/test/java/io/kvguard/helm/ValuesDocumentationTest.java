package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every knob in values.yaml is documented there and typed in values.schema.json, and the schema
 * hides none.
 */
class ValuesDocumentationTest {
  private static List<String> lines;
  private static JsonNode values;
  private static JsonNode schema;

  @BeforeAll
  static void read() throws IOException {
    lines = Files.readAllLines(RenderedChart.CHART.resolve("values.yaml"));
    values = new YAMLMapper().readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
    schema =
        new ObjectMapper().readTree(RenderedChart.CHART.resolve("values.schema.json").toFile());
  }

  /**
   * A key of values.yaml: its dotted path, whether a "# --" comment sits right above it, and
   * whether it is a leaf.
   */
  private record Key(String path, boolean documented, boolean leaf) {}

  /**
   * Reads the keys from the text (comments are not in the YAML tree); list items are values, not
   * keys.
   */
  private static List<Key> keys() {
    List<Key> keys = new ArrayList<>();
    List<String> stack = new ArrayList<>();
    List<Integer> indents = new ArrayList<>();
    int listIndent = Integer.MAX_VALUE;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      String stripped = line.strip();
      if (stripped.isEmpty() || stripped.startsWith("#")) {
        continue;
      }
      int indent = line.indexOf(stripped);
      if (stripped.startsWith("- ")) {
        listIndent = Math.min(listIndent, indent);
        continue;
      }
      if (indent >= listIndent) {
        continue;
      }
      listIndent = Integer.MAX_VALUE;
      int colon = stripped.indexOf(':');
      assertThat(colon).as("line %d is a key: %s", i + 1, line).isPositive();
      while (!indents.isEmpty() && indents.get(indents.size() - 1) >= indent) {
        indents.remove(indents.size() - 1);
        stack.remove(stack.size() - 1);
      }
      stack.add(stripped.substring(0, colon));
      indents.add(indent);
      boolean leaf = !stripped.substring(colon + 1).isBlank() || nextIsListOrEmpty(i, indent);
      keys.add(new Key(String.join(".", stack), documentedAbove(i), leaf));
    }
    return keys;
  }

  private static boolean nextIsListOrEmpty(int line, int indent) {
    for (int j = line + 1; j < lines.size(); j++) {
      String next = lines.get(j);
      String stripped = next.strip();
      if (stripped.isEmpty() || stripped.startsWith("#")) {
        continue;
      }
      return stripped.startsWith("- ") || next.indexOf(stripped) <= indent;
    }
    return true;
  }

  private static boolean documentedAbove(int line) {
    int j = line - 1;
    while (j >= 0 && lines.get(j).strip().startsWith("#")) {
      if (lines.get(j).strip().startsWith("# -- ")) {
        return true;
      }
      j--;
    }
    return false;
  }

  @Test
  void everyLeafIsDocumentedOrSitsUnderADocumentedKey() {
    List<Key> keys = keys();
    assertThat(keys).hasSizeGreaterThan(50);
    Set<String> documented = new TreeSet<>();
    keys.stream().filter(Key::documented).forEach(k -> documented.add(k.path()));
    List<String> undocumented =
        keys.stream()
            .filter(Key::leaf)
            .filter(
                k ->
                    documented.stream()
                        .noneMatch(d -> k.path().equals(d) || k.path().startsWith(d + ".")))
            .map(Key::path)
            .toList();
    assertThat(undocumented).as("values without a '# --' comment on them or a parent").isEmpty();
  }

  @Test
  void theSchemaTypesEveryValueAndHidesNone() {
    Set<String> inValues = new TreeSet<>();
    Set<String> inSchema = new TreeSet<>();
    walkValues(values, "", inValues);
    walkSchema(schema, "", inSchema);
    inSchema.remove("global");
    assertThat(inValues).isEqualTo(inSchema);
    assertThat(keys()).extracting(Key::path).containsAll(inValues);
  }

  /**
   * Kubernetes objects passed through as they are: their fields are Kubernetes', not the chart's,
   * knobs.
   */
  private static final Set<String> KUBERNETES_OBJECTS =
      Set.of(
          "resources",
          "podSecurityContext",
          "securityContext",
          "healthProbes",
          "crds.upgradeJob.resources");

  /**
   * Paths of the schema's declared properties, down to where values.yaml stops (free maps and
   * lists).
   */
  private static void walkSchema(JsonNode node, String prefix, Set<String> out) {
    JsonNode properties = node.get("properties");
    if (properties == null) {
      return;
    }
    for (Map.Entry<String, JsonNode> property :
        (Iterable<Map.Entry<String, JsonNode>>) properties::fields) {
      String path = prefix.isEmpty() ? property.getKey() : prefix + "." + property.getKey();
      JsonNode valueHere = at(values, path);
      if (valueHere == null
          || !valueHere.isObject()
          || valueHere.isEmpty()
          || !property.getValue().has("properties")
          || KUBERNETES_OBJECTS.contains(path)) {
        out.add(path);
      } else {
        walkSchema(property.getValue(), path, out);
      }
    }
  }

  private static void walkValues(JsonNode node, String prefix, Set<String> out) {
    for (Map.Entry<String, JsonNode> field : (Iterable<Map.Entry<String, JsonNode>>) node::fields) {
      String path = prefix.isEmpty() ? field.getKey() : prefix + "." + field.getKey();
      JsonNode declared = at(schema, "properties." + path.replace(".", ".properties."));
      if (field.getValue().isObject()
          && !field.getValue().isEmpty()
          && declared != null
          && declared.has("properties")
          && !KUBERNETES_OBJECTS.contains(path)) {
        walkValues(field.getValue(), path, out);
      } else {
        out.add(path);
      }
    }
  }

  private static JsonNode at(JsonNode root, String dotted) {
    JsonNode node = root;
    for (String part : dotted.split("\\.")) {
      node = node == null ? null : node.get(part);
    }
    return node;
  }
}

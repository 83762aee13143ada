package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A real API server stores only structural CRD schemas (StructuralSchema); the mock stores
 * anything.
 */
class CrdStructuralTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private static JsonNode schema() throws IOException {
    return YAML.readTree(
            Files.readString(
                Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")))
        .at("/spec/versions/0/schema/openAPIV3Schema");
  }

  @Test
  void theGeneratedSchemaIsStructural() throws IOException {
    assertThat(StructuralSchema.violations(schema())).isEmpty();
  }

  @Test
  void roleNamesAreTheRequiredKeyOfAListMap() throws IOException {
    JsonNode roles = schema().at("/properties/spec/properties/roles");
    assertThat(roles.path("x-kubernetes-list-type").asText()).isEqualTo("map");
    assertThat(roles.path("x-kubernetes-list-map-keys").toString()).isEqualTo("[\"name\"]");
    assertThat(roles.path("items").path("required").toString()).contains("\"name\"");
  }

  @Test
  void theCheckCatchesAnOptionalListMapKeyAndATypeInsideAnyOf() throws IOException {
    ObjectNode broken = (ObjectNode) schema().deepCopy();
    ObjectNode roleItems = (ObjectNode) broken.at("/properties/spec/properties/roles/items");
    ((ArrayNode) roleItems.get("required")).removeAll();
    ((ObjectNode) roleItems.at("/properties/port/anyOf/1")).put("maxLength", 15);
    ((ObjectNode) broken.at("/properties/spec/properties/model")).remove("type");
    assertThat(StructuralSchema.violations(broken))
        .hasSize(3)
        .anyMatch(p -> p.startsWith(".spec.model: type must be specified"))
        .anyMatch(
            p -> p.equals(".spec.roles: list-map key name must be required or have a default"))
        .anyMatch(
            p ->
                p.startsWith(".spec.roles[].port: x-kubernetes-int-or-string needs exactly anyOf"));
  }
}

package io.kvguard.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The routers' own kinds in the examples (InferencePool, LLMInferenceService, LeaderWorkerSet):
 * registered with the embedded API server so they can be created, and checked against the fields
 * their projects define (src/test/resources/router-schemas.yaml, restated from each project's API
 * types at a tag).
 */
final class ThirdPartyKinds {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNode SCHEMAS = load();

  private ThirdPartyKinds() {}

  static boolean known(String kind) {
    return SCHEMAS.path("definitions").has(kind);
  }

  /**
   * What a real API server with the project's CRD installed would refuse in {@code document}; empty
   * when none.
   */
  static List<String> violations(JsonNode document) {
    String kind = document.path("kind").asText();
    ObjectNode root = SCHEMAS.deepCopy();
    root.put("$ref", "#/definitions/" + kind);
    List<String> problems = new ArrayList<>();
    try {
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4)
          .getSchema(JSON.writeValueAsString(root), InputFormat.JSON)
          .validate(JSON.writeValueAsString(document), InputFormat.JSON)
          .forEach(e -> problems.add(e.toString()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return problems;
  }

  /**
   * Registers the kind of {@code document} (group and version from its apiVersion) with the API
   * server.
   */
  static void register(KubernetesClient client, JsonNode document) {
    String kind = document.path("kind").asText();
    String[] groupVersion = document.path("apiVersion").asText().split("/");
    String plural = kind.toLowerCase(Locale.ROOT) + "s";
    String name = plural + "." + groupVersion[0];
    if (client.apiextensions().v1().customResourceDefinitions().withName(name).get() != null) {
      return;
    }
    CustomResourceDefinition crd =
        new CustomResourceDefinitionBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withGroup(groupVersion[0])
            .withScope("Namespaced")
            .withNewNames()
            .withKind(kind)
            .withPlural(plural)
            .withSingular(kind.toLowerCase(Locale.ROOT))
            .endNames()
            .addNewVersion()
            .withName(groupVersion[1])
            .withServed(true)
            .withStorage(true)
            .withNewSchema()
            .withNewOpenAPIV3Schema()
            .withType("object")
            .withXKubernetesPreserveUnknownFields(true)
            .endOpenAPIV3Schema()
            .endSchema()
            .endVersion()
            .endSpec()
            .build();
    client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
  }

  private static JsonNode load() {
    try (InputStream in = ThirdPartyKinds.class.getResourceAsStream("/router-schemas.yaml")) {
      return YAML.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

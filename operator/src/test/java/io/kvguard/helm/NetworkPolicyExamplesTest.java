package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The chart's default NetworkPolicy lets kvguard reach every engine of the chart's own examples
 * (docs/examples): the port each role names, resolved to the container port of the example's
 * workload as kvguard resolves it.
 */
class NetworkPolicyExamplesTest {
  private static final YAMLMapper YAML = new YAMLMapper();

  static Stream<Path> examples() throws IOException {
    return Files.list(Path.of("../docs/examples"))
        .filter(p -> p.toString().endsWith(".yaml"))
        .sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void everyExampleEnginePortIsAllowedByTheDefaultEgress(Path example) throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    YAML.readerFor(JsonNode.class)
        .readValues(new YAMLFactory().createParser(example.toFile()))
        .forEachRemaining(d -> documents.add((JsonNode) d));
    List<Integer> enginePorts = new ArrayList<>();
    for (JsonNode document : documents) {
      if (document.path("kind").asText().equals("ModelDeployment")) {
        for (JsonNode role : document.at("/spec/roles")) {
          JsonNode port = role.path("port");
          enginePorts.add(port.isInt() ? port.asInt() : containerPort(documents, port.asText()));
        }
      }
    }
    assertThat(enginePorts).isNotEmpty();

    NetworkPolicy policy =
        RenderedChart.render("networkPolicy: {enabled: true, apiServer: {cidrs: [10.0.0.1/32]}}")
            .one(NetworkPolicy.class);
    List<IntOrString> allowed =
        policy.getSpec().getEgress().stream()
            .map(NetworkPolicyEgressRule::getPorts)
            .flatMap(List::stream)
            .map(NetworkPolicyPort::getPort)
            .toList();
    assertThat(allowed.stream().map(IntOrString::getIntVal).toList())
        .as("%s: the engine ports must be open by default", example)
        .containsAll(enginePorts);
  }

  /**
   * The containerPort of the one container port with this name in the example's workloads (a
   * Service's or a router's port of the same name has no containerPort and is not an engine's).
   */
  private static int containerPort(List<JsonNode> documents, String name) {
    List<Integer> found = new ArrayList<>();
    for (JsonNode document : documents) {
      document
          .findValues("ports")
          .forEach(
              ports ->
                  ports.forEach(
                      p -> {
                        if (name.equals(p.path("name").asText()) && p.has("containerPort")) {
                          found.add(p.path("containerPort").asInt());
                        }
                      }));
    }
    assertThat(found).as("container port %s", name).isNotEmpty();
    assertThat(found.stream().distinct()).as("container port %s names one number", name).hasSize(1);
    return found.get(0);
  }
}

package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.kvguard.customresource.CrdRulesAccess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The examples users copy: each ModelDeployment is admitted by the generated CRD's schema and CEL rules, and
 * every workload's pod template declares the kvguard.io/pool-verified readiness gate.
 */
class ExamplesTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  static Stream<Path> examples() throws IOException {
    return Files.list(Path.of("../docs/examples")).filter(p -> p.toString().endsWith(".yaml")).sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void modelDeploymentsAreValidAndWorkloadsCarryTheReadinessGate(Path file) throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    YAML.readerFor(JsonNode.class).readValues(new YAMLFactory().createParser(file.toFile())).forEachRemaining(d -> documents.add((JsonNode) d));
    assertThat(documents).extracting(d -> d.path("kind").asText()).contains("ModelDeployment");
    int workloads = 0;
    for (JsonNode document : documents) {
      String kind = document.path("kind").asText();
      if (kind.equals("ModelDeployment")) {
        assertThat(CrdRulesAccess.violations(new YAMLMapper().writeValueAsString(document))).as(file.toString()).isEmpty();
      } else {
        JsonNode podSpec = kind.equals("LeaderWorkerSet")
            ? document.at("/spec/leaderWorkerTemplate/leaderTemplate/spec")
            : document.at("/spec/template/spec");
        assertThat(podSpec.path("readinessGates").findValuesAsText("conditionType"))
            .as("%s %s declares the readiness gate", kind, document.at("/metadata/name").asText())
            .contains("kvguard.io/pool-verified");
        workloads++;
      }
    }
    assertThat(workloads).isPositive();
  }
}

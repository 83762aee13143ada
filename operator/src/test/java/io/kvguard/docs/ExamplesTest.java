package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.kvguard.customresource.CrdRulesAccess;
import io.kvguard.gate.GateNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The examples users copy: each ModelDeployment is admitted by the generated CRD's schema and CEL
 * rules, and every workload whose pods a ModelDeployment selects gets the kvguard.io/pool-verified
 * readiness gate: declared in its pod template, or, in a namespace the example labels for the
 * webhook, added by the webhook's own decision on the pod's CREATE (a router's own Deployment, a
 * Service or an InferencePool in the same file is not such a workload).
 */
class ExamplesTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String GATE = GateNames.CONDITION_TYPE;
  private static final Path INJECTED_GATE =
      Path.of("../docs/examples/injected-gate-deployment.yaml");
  private static final java.util.Set<String> WORKLOADS =
      java.util.Set.of("Deployment", "LeaderWorkerSet", "LLMInferenceService");

  static Stream<Path> examples() throws IOException {
    return Files.list(Path.of("../docs/examples"))
        .filter(p -> p.toString().endsWith(".yaml"))
        .sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void modelDeploymentsAreValidAndWorkloadsCarryTheReadinessGate(Path file) throws IOException {
    List<JsonNode> documents = documents(file);
    assertThat(documents).extracting(d -> d.path("kind").asText()).contains("ModelDeployment");
    List<JsonNode> roleSelectors = new ArrayList<>();
    documents.stream()
        .filter(d -> d.path("kind").asText().equals("ModelDeployment"))
        .forEach(
            d ->
                d.at("/spec/roles").forEach(r -> roleSelectors.add(r.at("/selector/matchLabels"))));
    int workloads = 0;
    for (JsonNode document : documents) {
      String kind = document.path("kind").asText();
      if (kind.equals("ModelDeployment")) {
        assertThat(CrdRulesAccess.violations(new YAMLMapper().writeValueAsString(document)))
            .as(file.toString())
            .isEmpty();
      } else if (WORKLOADS.contains(kind)) {
        JsonNode podSpec =
            switch (kind) {
              case "LeaderWorkerSet" ->
                  document.at("/spec/leaderWorkerTemplate/leaderTemplate/spec");
              case "LLMInferenceService" -> document.at("/spec/template");
              default -> document.at("/spec/template/spec");
            };
        JsonNode labels =
            kind.equals("LeaderWorkerSet")
                ? document.at("/spec/leaderWorkerTemplate/leaderTemplate/metadata/labels")
                : document.at("/spec/template/metadata/labels");
        if (kind.equals("Deployment")
            && roleSelectors.stream().noneMatch(s -> selects(s, labels))) {
          continue; // not an engine kvguard guards (e.g. a router's own Deployment)
        }
        String namespace = document.at("/metadata/namespace").asText("default");
        // The template's own spec where the webhook is not called for the namespace.
        JsonNode admitted =
            ExampleAdmission.admittedSpec(
                documents,
                namespace,
                new ExampleWorkloads.TemplatePod(
                    document.at("/metadata/name").asText() + "-0",
                    YAML.convertValue(labels, new TypeReference<Map<String, String>>() {}),
                    podSpec));
        assertThat(admitted.path("readinessGates").findValuesAsText("conditionType"))
            .as(
                "%s %s declares the readiness gate or the webhook adds it",
                kind, document.at("/metadata/name").asText())
            .contains(GATE);
        workloads++;
      }
    }
    assertThat(workloads).isPositive();
  }

  /**
   * The headline path of issue 18: a labelled namespace, a ModelDeployment, and a Deployment whose
   * template is not edited; every pod it creates gets the gate from the webhook.
   */
  @Test
  void theInjectedGateExampleLeavesItsDeploymentUntouchedAndTheWebhookGatesItsPods()
      throws IOException {
    List<JsonNode> documents = documents(INJECTED_GATE);
    JsonNode deployment =
        documents.stream()
            .filter(d -> d.path("kind").asText().equals("Deployment"))
            .findFirst()
            .orElseThrow();
    String namespace = deployment.at("/metadata/namespace").asText();

    assertThat(ExampleAdmission.injectionEnabled(documents, namespace)).isTrue();
    assertThat(deployment.at("/spec/template/spec").has("readinessGates")).isFalse();
    assertThat(
            documents.stream()
                .filter(d -> d.path("kind").asText().equals("ModelDeployment"))
                .map(d -> d.at("/spec/enforcement").asText("Enforce")))
        .containsOnly("Enforce");
    List<ExampleWorkloads.TemplatePod> pods = ExampleWorkloads.pods(deployment);
    assertThat(pods).isNotEmpty();
    for (ExampleWorkloads.TemplatePod pod : pods) {
      assertThat(
              ExampleAdmission.admittedSpec(documents, namespace, pod)
                  .path("readinessGates")
                  .findValuesAsText("conditionType"))
          .as("pod %s as admitted", pod.name())
          .containsExactly(GATE);
    }
  }

  private static List<JsonNode> documents(Path file) throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    YAML.readerFor(JsonNode.class)
        .readValues(new YAMLFactory().createParser(file.toFile()))
        .forEachRemaining(d -> documents.add((JsonNode) d));
    return documents;
  }

  /** Whether a role's matchLabels select a pod with these template labels. */
  private static boolean selects(JsonNode matchLabels, JsonNode labels) {
    java.util.Iterator<java.util.Map.Entry<String, JsonNode>> wanted = matchLabels.fields();
    while (wanted.hasNext()) {
      java.util.Map.Entry<String, JsonNode> label = wanted.next();
      if (!label.getValue().asText().equals(labels.path(label.getKey()).asText(null))) {
        return false;
      }
    }
    return matchLabels.size() > 0;
  }
}

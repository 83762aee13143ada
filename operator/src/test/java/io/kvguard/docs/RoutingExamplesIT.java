package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kvguard.customresource.CrdRulesAccess;
import io.kvguard.gate.GatePatchPlanner;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every example under docs/examples applied to the embedded API server, as a user would apply it,
 * and the traffic each router in it would send, by the rule read in the router's source
 * (docs/routing.md): before kvguard verified a pod no router reaches it, after kvguard's own writes
 * (the planner's condition and label patches) every router reaches verified pods, and after a
 * refusal none again.
 */
class RoutingExamplesIT {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final GateDecision VERIFIED =
      new GateDecision(true, GateReason.PoolSufficient, "pool 262144 tokens");
  private static final GateDecision REFUSED =
      new GateDecision(false, GateReason.PoolTooSmall, "pool 65536 tokens");

  static Stream<Path> examples() throws IOException {
    return Files.list(Path.of("../docs/examples"))
        .filter(p -> p.toString().endsWith(".yaml"))
        .sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void appliesAndNoRouterReachesAPodKvguardHasNotVerified(Path file) throws IOException {
    List<JsonNode> documents = read(file);
    try (EmbeddedApiServer api = new EmbeddedApiServer();
        NamespacedKubernetesClient client = api.client()) {
      api.applyModelDeploymentCrd(client);
      List<ExampleRouters.Router> routers = new ArrayList<>();
      List<Pod> pods = new ArrayList<>();
      for (JsonNode document : documents) {
        assertThat(problems(document)).as("%s: %s", file, describe(document)).isEmpty();
        apply(client, document);
        routers.addAll(ExampleRouters.of(document));
        for (ExampleWorkloads.TemplatePod template : ExampleWorkloads.pods(document)) {
          // As admitted: where the example labels the namespace, with the webhook's patch.
          ExampleWorkloads.TemplatePod admitted =
              new ExampleWorkloads.TemplatePod(
                  template.name(),
                  template.labels(),
                  ExampleAdmission.admittedSpec(documents, namespace(document), template));
          pods.add(
              client
                  .resource(ExampleWorkloads.running(namespace(document), admitted, pods.size()))
                  .create());
        }
      }
      assertThat(pods).as("%s creates pods", file).isNotEmpty();
      Set<String> guarded = guarded(client, documents);
      Set<String> gated = new TreeSet<>();
      pods.stream()
          .filter(p -> !p.getSpec().getReadinessGates().isEmpty())
          .forEach(p -> gated.add(p.getMetadata().getName()));
      assertThat(guarded)
          .as("a pod with the gate that no role selects is never Ready")
          .containsAll(gated);
      pods.stream()
          .filter(p -> guarded.contains(p.getMetadata().getName()))
          .filter(p -> ExampleAdmission.injectionEnabled(documents, p.getMetadata().getNamespace()))
          .forEach(
              p ->
                  assertThat(gated)
                      .as(
                          "the webhook gates %s, in a namespace labelled for it",
                          p.getMetadata().getName())
                      .contains(p.getMetadata().getName()));
      if (file.getFileName().toString().startsWith("routing-")) {
        assertThat(routers).as("%s shows a router", file).isNotEmpty();
      }

      assertThat(routed(client, routers)).as("%s before kvguard verified any pod", file).isEmpty();

      write(client, guarded, VERIFIED);
      for (ExampleRouters.Router router : routers) {
        Set<String> reached = routed(client, List.of(router));
        assertThat(reached).as("%s reaches verified pods", router.name()).isNotEmpty();
        assertThat(guarded)
            .as("%s reaches only pods kvguard guards", router.name())
            .containsAll(reached);
      }

      write(client, guarded, REFUSED);
      assertThat(routed(client, routers)).as("%s after kvguard refused every pod", file).isEmpty();
    }
  }

  private static List<String> problems(JsonNode document) throws IOException {
    String kind = document.path("kind").asText();
    if (kind.equals("ModelDeployment")) {
      return CrdRulesAccess.violations(new YAMLMapper().writeValueAsString(document));
    }
    if (ThirdPartyKinds.known(kind)) {
      return ThirdPartyKinds.violations(document);
    }
    if (kind.equals("Deployment")) {
      // apps/v1 validation: "selector does not match template labels" (a real API server refuses
      // it).
      Map<String, String> selector =
          YAML.convertValue(document.at("/spec/selector/matchLabels"), Map.class);
      Map<String, String> labels =
          YAML.convertValue(document.at("/spec/template/metadata/labels"), Map.class);
      return labels.entrySet().containsAll(selector.entrySet())
          ? List.of()
          : List.of("selector does not match template labels");
    }
    return List.of();
  }

  private static void apply(KubernetesClient client, JsonNode document) throws IOException {
    if (ThirdPartyKinds.known(document.path("kind").asText())) {
      ThirdPartyKinds.register(client, document);
    }
    HasMetadata resource =
        client.getKubernetesSerialization().unmarshal(YAML.writeValueAsString(document));
    HasMetadata created = client.resource(resource).create();
    assertThat(created.getMetadata().getUid()).as("%s created", describe(document)).isNotNull();
    if (resource instanceof GenericKubernetesResource) {
      assertThat(
              client
                  .genericKubernetesResources(
                      document.path("apiVersion").asText(), document.path("kind").asText())
                  .inNamespace(namespace(document))
                  .withName(resource.getMetadata().getName())
                  .get())
          .as("%s can be read back", describe(document))
          .isNotNull();
    }
  }

  /**
   * The pods some role of some ModelDeployment selects (the API server's own label-selector
   * semantics).
   */
  private static Set<String> guarded(KubernetesClient client, List<JsonNode> documents) {
    Set<String> names = new TreeSet<>();
    for (JsonNode document : documents) {
      if (document.path("kind").asText().equals("ModelDeployment")) {
        for (JsonNode role : document.at("/spec/roles")) {
          LabelSelector selector = YAML.convertValue(role.path("selector"), LabelSelector.class);
          client
              .pods()
              .inNamespace(namespace(document))
              .withLabelSelector(selector)
              .list()
              .getItems()
              .forEach(p -> names.add(p.getMetadata().getName()));
        }
      }
    }
    return names;
  }

  private static Set<String> routed(KubernetesClient client, List<ExampleRouters.Router> routers) {
    Set<String> names = new TreeSet<>();
    for (ExampleRouters.Router router : routers) {
      client.pods().inAnyNamespace().withLabels(router.selector()).list().getItems().stream()
          .filter(router::routes)
          .forEach(p -> names.add(p.getMetadata().getName()));
    }
    return names;
  }

  /**
   * kvguard's writes for {@code decision} on every guarded pod: the planner's pods/status patch,
   * then the label.
   */
  private static void write(KubernetesClient client, Set<String> guarded, GateDecision decision) {
    for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
      if (!guarded.contains(pod.getMetadata().getName())) {
        continue;
      }
      var resource =
          client
              .pods()
              .inNamespace(pod.getMetadata().getNamespace())
              .withName(pod.getMetadata().getName());
      GatePatchPlanner.conditionPatch(pod, decision, Instant.parse("2026-01-01T00:00:00Z"))
          .ifPresent(
              patch ->
                  resource.subresource("status").patch(PatchContext.of(PatchType.JSON), patch));
      GatePatchPlanner.labelPatch(resource.get(), decision)
          .ifPresent(patch -> resource.patch(PatchContext.of(PatchType.JSON), patch));
    }
  }

  private static List<JsonNode> read(Path file) throws IOException {
    List<JsonNode> documents = new ArrayList<>();
    YAML.readerFor(JsonNode.class)
        .readValues(new YAMLFactory().createParser(file.toFile()))
        .forEachRemaining(d -> documents.add((JsonNode) d));
    return documents;
  }

  private static String namespace(JsonNode document) {
    return document.at("/metadata/namespace").asText("default");
  }

  private static String describe(JsonNode document) {
    return document.path("kind").asText() + " " + document.at("/metadata/name").asText();
  }
}

package io.kvguard.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvguard.gate.GateNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What kubectl gets from the demo in --keep-running mode, without starting a demo. */
class KubectlTablesTest {
  private static final String TABLE =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
  private static final Instant NOW = Instant.parse("2026-09-09T12:00:00Z");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private final KubectlTables tables =
      new KubectlTables(
          () ->
              new ClusterSnapshot(
                  NOW,
                  List.of(),
                  List.of(
                      pod("glm-prefill-0", "prefill", "False"),
                      pod("glm-decode-0", "decode", "True")),
                  List.of()),
          PrinterColumns.fromGeneratedCrd(SERIALIZATION),
          SERIALIZATION,
          Comparator.comparing(e -> e.getMetadata().getName()));

  private static Pod pod(String name, String role, String gate) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("inference")
        .withLabels(Map.of("role", role))
        .withCreationTimestamp(NOW.minus(Duration.ofSeconds(75)).toString())
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("engine")
        .endContainer()
        .addNewReadinessGate()
        .withConditionType(GateNames.CONDITION_TYPE)
        .endReadinessGate()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .withPodIP("127.0.0.1")
        .addNewCondition()
        .withType(GateNames.CONDITION_TYPE)
        .withStatus(gate)
        .endCondition()
        .addNewContainerStatus()
        .withName("engine")
        .withReady(true)
        .withRestartCount(1)
        .endContainerStatus()
        .endStatus()
        .build();
  }

  private MockResponse get(String path, String accept) {
    Headers.Builder headers = Headers.builder();
    if (accept != null) {
      headers.add("Accept", accept);
    }
    return tables.answer(
        new RecordedRequest("HTTP/1.1", HttpMethod.GET, path, headers.build(), new Buffer()));
  }

  private static JsonNode json(MockResponse response) throws Exception {
    return new ObjectMapper().readTree(response.getBody().readUtf8());
  }

  @Test
  void discoveryNamesTheShortNameKubectlResolves() throws Exception {
    JsonNode resources = json(get("/apis/kvguard.io/v1alpha1?timeout=32s", null));

    assertThat(resources.get("resources").get(0).get("shortNames").get(0).asText())
        .isEqualTo("mdep");
    assertThat(json(get("/api", null)).get("kind").asText()).isEqualTo("APIVersions");
  }

  @Test
  void podsTableShowsReadinessGatesAndCarriesLabelsForDashL() throws Exception {
    JsonNode table = json(get("/api/v1/namespaces/inference/pods?limit=500", TABLE));

    List<String> columns = new ArrayList<>();
    table.get("columnDefinitions").forEach(c -> columns.add(c.get("name").asText()));
    assertThat(columns)
        .containsExactly("Name", "Ready", "Status", "Restarts", "Age", "IP", "Readiness Gates");
    JsonNode prefill = table.get("rows").get(0);
    assertThat(prefill.get("cells").toString())
        .isEqualTo("[\"glm-prefill-0\",\"1/1\",\"Running\",\"1\",\"75s\",\"127.0.0.1\",\"0/1\"]");
    assertThat(prefill.get("object").get("metadata").get("labels").get("role").asText())
        .isEqualTo("prefill");
    assertThat(table.get("rows").get(1).get("cells").get(6).asText())
        .as("decode gate open")
        .isEqualTo("1/1");
  }

  @Test
  void equalityLabelSelectorsAreHonouredAndRicherOnesLeftToTheMock() throws Exception {
    JsonNode table =
        json(get("/api/v1/namespaces/inference/pods?labelSelector=role%3Dprefill", TABLE));
    assertThat(table.get("rows")).hasSize(1);

    assertThat(get("/api/v1/namespaces/inference/pods?labelSelector=role+in+%28prefill%29", TABLE))
        .isNull();
    assertThat(get("/api/v1/namespaces/inference/pods?fieldSelector=metadata.name%3Dx", TABLE))
        .isNull();
    assertThat(get("/api/v1/namespaces/inference/pods?watch=true", TABLE)).isNull();
  }

  @Test
  void plainJsonRequestsAndMissingObjectsGoToTheMock() {
    assertThat(get("/api/v1/namespaces/inference/pods", "application/json")).isNull();
    assertThat(get("/api/v1/namespaces/inference/pods/nope", TABLE)).isNull();
    assertThat(get("/apis/kvguard.io/v1alpha1/namespaces/inference/modeldeployments/nope", TABLE))
        .isNull();
  }

  @Test
  void agesReadLikeKubectls() {
    assertThat(PrinterColumns.age(Duration.ofSeconds(75))).isEqualTo("75s");
    assertThat(PrinterColumns.age(Duration.ofSeconds(200))).isEqualTo("3m20s");
    assertThat(PrinterColumns.age(Duration.ofMinutes(42))).isEqualTo("42m");
    assertThat(PrinterColumns.age(Duration.ofMinutes(185))).isEqualTo("3h5m");
    assertThat(PrinterColumns.age(Duration.ofHours(30))).isEqualTo("30h");
    assertThat(PrinterColumns.age(Duration.ofDays(3))).isEqualTo("3d");
  }
}

package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.zjsonpatch.JsonPatch;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Golden AdmissionReviews in, answers out. Each folder under golden/webhook holds in-review.json
 * (what the API server posts for a pod CREATE) and in-modeldeployments.yaml (the namespace's
 * ModelDeployments as the informer holds them, several documents), out-response.json (the
 * AdmissionReview answered, exactly) and out-patch.json (its patch, decoded) where a patch is
 * expected: no out-patch.json, no patch. Every patch is applied to the request's pod: it must then
 * keep every gate it had, in order, plus kvguard's where the gate was injected, and every label it
 * had but kvguard's own (kvguard.io/verified, the context-length label), which it must lose whether
 * or not a policy selects the pod. Unused files fail the test. -Dkvguard.golden.update=true
 * rewrites the out- files; review the diff.
 */
class GateInjectionGoldenTest {
  private static final Path ROOT = Path.of("src/test/resources/golden/webhook");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  private static final boolean UPDATE = Boolean.getBoolean("kvguard.golden.update");

  static Stream<Path> cases() throws IOException {
    return Files.list(ROOT).filter(Files::isDirectory).sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void answersMatchTheGoldenFiles(Path folder) throws Exception {
    Set<String> used =
        new HashSet<>(List.of("in-review.json", "in-modeldeployments.yaml", "out-response.json"));
    JsonNode review = JSON.readTree(Files.readString(folder.resolve("in-review.json")));
    List<ModelDeployment> policies = new ArrayList<>();
    for (String document :
        Files.readString(folder.resolve("in-modeldeployments.yaml")).split("(?m)^---$")) {
      if (!document.isBlank()) {
        policies.add(SERIALIZATION.unmarshal(document, ModelDeployment.class));
      }
    }

    GateInjection.Decision decision =
        GateInjection.decide(
            AdmissionReviewReader.read(Files.readAllBytes(folder.resolve("in-review.json"))),
            policies);
    JsonNode answer = GateInjection.answer(decision);

    golden(folder.resolve("out-response.json"), JSON.writeValueAsString(answer) + "\n");
    JsonNode response = answer.path("response");
    assertThat(response.path("allowed").asBoolean()).as("%s: never denies", folder).isTrue();
    assertThat(response.path("uid").asText())
        .isEqualTo(review.path("request").path("uid").asText());
    Path patchFile = folder.resolve("out-patch.json");
    if (UPDATE) {
      Files.deleteIfExists(patchFile);
    }
    if (!response.has("patch")) {
      assertThat(patchFile).as("%s expects a patch", folder).doesNotExist();
    } else {
      used.add("out-patch.json");
      checkPatch(folder, review, decision, response, patchFile);
    }
    try (Stream<Path> files = Files.list(folder)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .as("unused golden files in %s", folder)
          .allMatch(used::contains);
    }
  }

  private static void checkPatch(
      Path folder,
      JsonNode review,
      GateInjection.Decision decision,
      JsonNode response,
      Path patchFile)
      throws IOException {
    assertThat(response.path("patchType").asText()).isEqualTo("JSONPatch");
    JsonNode patch =
        JSON.readTree(
            new String(
                Base64.getDecoder().decode(response.path("patch").asText()),
                StandardCharsets.UTF_8));
    golden(patchFile, JSON.writeValueAsString(patch) + "\n");

    JsonNode pod = review.path("request").path("object");
    JsonNode patched = JsonPatch.apply(patch, pod);
    List<String> expected = new ArrayList<>(gates(pod));
    if (decision.outcome() == GateInjection.Outcome.injected) {
      expected.add(GateNames.CONDITION_TYPE);
    }
    assertThat(gates(patched))
        .as("%s: the pod's gates after the patch", folder)
        .isEqualTo(expected);
    Map<String, String> labels = labels(pod);
    labels.keySet().removeAll(List.of(GateNames.VERIFIED_LABEL, GateNames.CONTEXT_LENGTH_LABEL));
    assertThat(labels(patched))
        .as("%s: the pod's labels after the patch, kvguard's removed", folder)
        .containsExactlyEntriesOf(labels);
  }

  private static Map<String, String> labels(JsonNode pod) {
    Map<String, String> labels = new LinkedHashMap<>();
    pod.path("metadata")
        .path("labels")
        .fields()
        .forEachRemaining(label -> labels.put(label.getKey(), label.getValue().asText()));
    return labels;
  }

  private static List<String> gates(JsonNode pod) {
    List<String> gates = new ArrayList<>();
    pod.path("spec")
        .path("readinessGates")
        .forEach(g -> gates.add(g.path("conditionType").asText()));
    return gates;
  }

  private static void golden(Path file, String actual) throws IOException {
    if (UPDATE) {
      Files.writeString(file, actual);
    }
    assertThat(file).as("golden file").exists();
    assertThat(actual).as("%s", file).isEqualTo(Files.readString(file));
  }
}

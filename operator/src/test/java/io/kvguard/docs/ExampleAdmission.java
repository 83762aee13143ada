package io.kvguard.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.zjsonpatch.JsonPatch;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.webhook.GateInjection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * kvguard's readiness-gate webhook as the API server would call it for an example's pods: only in a
 * namespace the example labels {@code kvguard.io/readiness-gate-injection: enabled} (the chart's
 * namespaceSelector), with an AdmissionReview of the pod CREATE, answered by the webhook's own
 * decision ({@link GateInjection}) from the example's ModelDeployments.
 */
final class ExampleAdmission {
  static final String INJECTION_LABEL = "kvguard.io/readiness-gate-injection";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private ExampleAdmission() {}

  /** Whether the example's documents label {@code namespace} for the webhook. */
  static boolean injectionEnabled(List<JsonNode> documents, String namespace) {
    return documents.stream()
        .filter(d -> d.path("kind").asText().equals("Namespace"))
        .filter(d -> d.at("/metadata/name").asText().equals(namespace))
        .anyMatch(d -> "enabled".equals(d.at("/metadata/labels").path(INJECTION_LABEL).asText()));
  }

  /**
   * The pod spec the API server stores: the template's, with the webhook's patch applied where the
   * namespace is labelled for it; the template's own spec elsewhere.
   */
  static JsonNode admittedSpec(
      List<JsonNode> documents, String namespace, ExampleWorkloads.TemplatePod pod) {
    if (!injectionEnabled(documents, namespace)) {
      return pod.spec();
    }
    ObjectNode object = JSON.createObjectNode();
    object.put("apiVersion", "v1").put("kind", "Pod");
    ObjectNode metadata = object.putObject("metadata");
    metadata.put("name", pod.name()).put("namespace", namespace);
    pod.labels().forEach(metadata.putObject("labels")::put);
    object.set("spec", pod.spec().deepCopy());
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", "admission.k8s.io/v1").put("kind", "AdmissionReview");
    ObjectNode request = review.putObject("request");
    request.put("uid", "uid-" + pod.name());
    request.putObject("kind").put("group", "").put("version", "v1").put("kind", "Pod");
    request.put("namespace", namespace).put("operation", "CREATE");
    request.set("object", object);
    GateInjection.Decision decision = GateInjection.decide(review, policies(documents));
    if (decision.patch().isEmpty()) {
      return pod.spec();
    }
    try {
      return JsonPatch.apply(JSON.readTree(decision.patch().get()), object).path("spec");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<ModelDeployment> policies(List<JsonNode> documents) {
    List<ModelDeployment> policies = new ArrayList<>();
    for (JsonNode document : documents) {
      if (document.path("kind").asText().equals("ModelDeployment")) {
        try {
          policies.add(
              SERIALIZATION.unmarshal(
                  new YAMLMapper().writeValueAsString(document), ModelDeployment.class));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return policies;
  }
}

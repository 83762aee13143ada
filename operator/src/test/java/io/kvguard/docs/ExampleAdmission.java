package io.kvguard.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.zjsonpatch.JsonPatch;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.helm.RenderedChart;
import io.kvguard.reconciler.LabelSelectors;
import io.kvguard.webhook.AdmissionReviewReader;
import io.kvguard.webhook.GateInjection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * kvguard's readiness-gate webhook as the API server would call it for an example's pods: only for
 * the namespaces and pods the chart's own MutatingWebhookConfiguration selects (rendered with its
 * default values: its namespaceSelector against the example's Namespace labels and the {@code
 * kubernetes.io/metadata.name} label the API server sets, its objectSelector against the pod's
 * labels), with an AdmissionReview of the pod CREATE, answered by the webhook's own decision
 * ({@link GateInjection}) from the example's ModelDeployments.
 */
final class ExampleAdmission {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private ExampleAdmission() {}

  /** The chart's webhook with its default values, installed in {@link RenderedChart#NAMESPACE}. */
  private static final MutatingWebhook WEBHOOK =
      RenderedChart.render("").one(MutatingWebhookConfiguration.class).getWebhooks().get(0);

  /**
   * Whether the chart's webhook is called for pods of {@code namespace} as the example labels it.
   */
  static boolean injectionEnabled(List<JsonNode> documents, String namespace) {
    Map<String, String> labels = new HashMap<>();
    documents.stream()
        .filter(d -> d.path("kind").asText().equals("Namespace"))
        .filter(d -> d.at("/metadata/name").asText().equals(namespace))
        .forEach(
            d ->
                d.at("/metadata/labels")
                    .fields()
                    .forEachRemaining(
                        label -> labels.put(label.getKey(), label.getValue().asText())));
    // The API server labels every namespace with its own name.
    labels.put("kubernetes.io/metadata.name", namespace);
    return selects(WEBHOOK.getNamespaceSelector(), labels);
  }

  /** A webhook selector as the API server reads it: absent or empty selects everything. */
  private static boolean selects(LabelSelector selector, Map<String, String> labels) {
    boolean empty =
        selector == null
            || ((selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty())
                && (selector.getMatchExpressions() == null
                    || selector.getMatchExpressions().isEmpty()));
    return empty || LabelSelectors.matches(selector, labels);
  }

  /**
   * The pod spec the API server stores: the template's, with the webhook's patch applied where the
   * namespace is labelled for it; the template's own spec elsewhere.
   */
  static JsonNode admittedSpec(
      List<JsonNode> documents, String namespace, ExampleWorkloads.TemplatePod pod) {
    if (!injectionEnabled(documents, namespace)
        || !selects(WEBHOOK.getObjectSelector(), pod.labels())) {
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
    GateInjection.Decision decision;
    try {
      decision =
          GateInjection.decide(
              AdmissionReviewReader.read(JSON.writeValueAsBytes(review)), policies(documents));
    } catch (IOException | AdmissionReviewReader.UnreadableReview e) {
      throw new IllegalStateException(e);
    }
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

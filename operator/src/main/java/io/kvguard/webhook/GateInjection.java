package io.kvguard.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.reconciler.LabelSelectors;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The webhook's decision, a pure function: an AdmissionReview v1 of a pod CREATE and the
 * ModelDeployments of the pod's namespace (from the informer cache) give the AdmissionReview to
 * answer. The pod gets a JSON patch that appends the {@code kvguard.io/pool-verified} readiness
 * gate when an Enforce-mode ModelDeployment that is not being deleted selects it (any role; {@link
 * LabelSelectors}, the reconciler's own selector semantics) and the gate is missing. Every other
 * request is allowed unchanged. Never denies: the worst a wrong answer can do is leave a pod
 * label-gated only, which the reconciler reports; a denial would stop a rollout.
 */
public final class GateInjection {
  static final ObjectMapper JSON = new ObjectMapper();

  /** What was decided, for the answer, the log and the metric. */
  public record Decision(
      String uid, Optional<String> patch, Outcome outcome, List<String> selectedBy) {}

  /** Metric label values (public API: {@code kvguard_webhook_admissions_total{outcome}}). */
  public enum Outcome {
    /** The gate was appended. */
    injected,
    /** An Enforce-mode ModelDeployment selects the pod and its spec already declares the gate. */
    alreadyGated,
    /** No Enforce-mode ModelDeployment selects the pod (none at all, or only Audit-mode ones). */
    notSelected,
    /** Not a pod CREATE (the chart registers only those; anything else is let through). */
    notPodCreate,
    /** The request could not be read or answered as asked; allowed without a patch. */
    error
  }

  private GateInjection() {}

  /** The namespace whose ModelDeployments the decision needs (empty: none needed). */
  public static String namespace(JsonNode review) {
    return review.path("request").path("namespace").asText("");
  }

  /**
   * Decides for one AdmissionReview; throws {@link IllegalArgumentException} when it is not one.
   */
  public static Decision decide(JsonNode review, List<ModelDeployment> policiesOfNamespace) {
    JsonNode request = review.path("request");
    String uid = request.path("uid").asText("");
    if (!"admission.k8s.io/v1".equals(review.path("apiVersion").asText()) || uid.isEmpty()) {
      throw new IllegalArgumentException("not an AdmissionReview v1 request with a uid");
    }
    JsonNode kind = request.path("kind");
    boolean podCreate =
        "CREATE".equals(request.path("operation").asText())
            && "Pod".equals(kind.path("kind").asText())
            && kind.path("group").asText("").isEmpty()
            && request.path("subResource").asText("").isEmpty();
    if (!podCreate) {
      return new Decision(uid, Optional.empty(), Outcome.notPodCreate, List.of());
    }
    JsonNode pod = request.path("object");
    if (!pod.isObject() || !pod.path("spec").isObject()) {
      throw new IllegalArgumentException("the request carries no pod with a spec");
    }
    Map<String, String> labels = labels(pod.path("metadata").path("labels"));
    String namespace = namespace(review);
    List<String> selectedBy =
        policiesOfNamespace.stream()
            .filter(md -> namespace.equals(md.getMetadata().getNamespace()))
            .filter(md -> md.getMetadata().getDeletionTimestamp() == null && md.getSpec() != null)
            .filter(md -> md.getSpec().effectiveEnforcement() == Enforcement.Enforce)
            .filter(md -> selects(md, labels))
            .map(md -> md.getMetadata().getName())
            .sorted()
            .toList();
    if (selectedBy.isEmpty()) {
      return new Decision(uid, Optional.empty(), Outcome.notSelected, selectedBy);
    }
    JsonNode gates = pod.path("spec").path("readinessGates");
    for (JsonNode gate : gates) {
      if (GateNames.CONDITION_TYPE.equals(gate.path("conditionType").asText())) {
        return new Decision(uid, Optional.empty(), Outcome.alreadyGated, selectedBy);
      }
    }
    return new Decision(
        uid, Optional.of(appendGate(gates.isArray())), Outcome.injected, selectedBy);
  }

  /** The AdmissionReview v1 answer: always allowed, with the patch when there is one. */
  public static ObjectNode answer(Decision decision) {
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", "admission.k8s.io/v1");
    review.put("kind", "AdmissionReview");
    ObjectNode response = review.putObject("response");
    response.put("uid", decision.uid());
    response.put("allowed", true);
    decision
        .patch()
        .ifPresent(
            patch -> {
              response.put("patchType", "JSONPatch");
              response.put(
                  "patch",
                  Base64.getEncoder().encodeToString(patch.getBytes(StandardCharsets.UTF_8)));
            });
    return review;
  }

  /**
   * The answer to any request, errors included: a request that cannot be decided is allowed without
   * a patch, under its uid when one can be read (the API server refuses an answer whose uid
   * differs, and then applies the webhook's failurePolicy).
   */
  public static ObjectNode answerAllowing(JsonNode review) {
    return answer(
        new Decision(
            review == null ? "" : review.path("request").path("uid").asText(""),
            Optional.empty(),
            Outcome.error,
            List.of()));
  }

  private static boolean selects(ModelDeployment md, Map<String, String> labels) {
    List<RoleSpec> roles = md.getSpec().getRoles();
    return roles != null
        && roles.stream().anyMatch(role -> LabelSelectors.matches(role.getSelector(), labels));
  }

  private static Map<String, String> labels(JsonNode node) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> label = it.next();
      if (label.getValue().isTextual()) {
        labels.put(label.getKey(), label.getValue().asText());
      }
    }
    return labels;
  }

  /**
   * Appends to the list where the pod has one (other gates kept, in order); JSON patch cannot
   * append to a list that is not there, so a pod without one gets the list whole.
   */
  private static String appendGate(boolean listExists) {
    ObjectNode gate = JSON.createObjectNode().put("conditionType", GateNames.CONDITION_TYPE);
    ArrayNode patch = JSON.createArrayNode();
    ObjectNode op = patch.addObject().put("op", "add");
    if (listExists) {
      op.put("path", "/spec/readinessGates/-").set("value", gate);
    } else {
      op.put("path", "/spec/readinessGates").set("value", JSON.createArrayNode().add(gate));
    }
    return patch.toString();
  }
}

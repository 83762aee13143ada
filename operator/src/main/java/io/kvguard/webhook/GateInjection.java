package io.kvguard.webhook;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.reconciler.LabelSelectors;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The webhook's decision, a pure function: what was read of an AdmissionReview v1 ({@link
 * PodAdmission}) and the ModelDeployments of the pod's namespace (from the informer cache) give the
 * AdmissionReview to answer. The pod gets a JSON patch that appends the {@code
 * kvguard.io/pool-verified} readiness gate when an Enforce-mode ModelDeployment that is not being
 * deleted selects it (any role; {@link LabelSelectors}, the reconciler's own selector semantics)
 * and the gate is missing. Every pod CREATE also loses the labels only kvguard may write ({@code
 * kvguard.io/verified} and the context-length label, {@link GateNames}), selected or not: a pod
 * born with them would be routed before any engine was verified. Every other request is allowed
 * unchanged. Never denies: the worst a wrong answer can do is leave a pod label-gated only, which
 * the reconciler reports; a denial would stop a rollout.
 */
public final class GateInjection {
  static final ObjectMapper JSON = new ObjectMapper();

  /** kvguard's own labels, in the order their removals are patched. */
  static final List<String> KVGUARD_LABELS =
      List.of(GateNames.VERIFIED_LABEL, GateNames.CONTEXT_LENGTH_LABEL);

  /**
   * What was decided, for the answer, the log and the metrics.
   *
   * @param labelsStripped kvguard's labels the patch removes (whatever the outcome)
   */
  public record Decision(
      String uid,
      Optional<String> patch,
      Outcome outcome,
      List<String> selectedBy,
      List<String> labelsStripped) {}

  /**
   * Metric label values (public API: {@code kvguard_webhook_admissions_total{outcome}}), one per
   * admission, about the readiness gate. Removed labels are counted apart ({@code
   * kvguard_webhook_labels_stripped_total{label}}): they go with any of these outcomes.
   */
  public enum Outcome {
    /** The gate was appended. */
    injected,
    /** An Enforce-mode ModelDeployment selects the pod and its spec already declares the gate. */
    alreadyGated,
    /** No Enforce-mode ModelDeployment selects the pod (none at all, or only Audit-mode ones). */
    notSelected,
    /** Not a pod CREATE (the chart registers only those; anything else is let through). */
    notPodCreate,
    /**
     * The request could not be read or answered as asked (or the pod has more labels than are
     * read); allowed without the gate.
     */
    error
  }

  private GateInjection() {}

  /**
   * Decides for one AdmissionReview; throws {@link IllegalArgumentException} when it is not one.
   */
  public static Decision decide(PodAdmission review, List<ModelDeployment> policiesOfNamespace) {
    String uid = review.uid();
    if (!"admission.k8s.io/v1".equals(review.apiVersion()) || uid.isEmpty()) {
      throw new IllegalArgumentException("not an AdmissionReview v1 request with a uid");
    }
    PodAdmission.Kind kind = review.kind();
    boolean podCreate =
        "CREATE".equals(review.operation())
            && "Pod".equals(kind.kind())
            && kind.group().isEmpty()
            && review.subResource().isEmpty();
    if (!podCreate) {
      return new Decision(uid, Optional.empty(), Outcome.notPodCreate, List.of(), List.of());
    }
    PodAdmission.Pod pod = review.pod();
    if (pod == null || !pod.hasSpec()) {
      throw new IllegalArgumentException("the request carries no pod with a spec");
    }
    List<String> stripped = KVGUARD_LABELS.stream().filter(pod.labels()::containsKey).toList();
    List<ObjectNode> ops = new ArrayList<>();
    stripped.forEach(label -> ops.add(removeLabel(label)));
    if (pod.labelsTruncated()) {
      // Selectors cannot be evaluated on part of the labels; kvguard's are removed all the same.
      return new Decision(uid, patch(ops), Outcome.error, List.of(), stripped);
    }
    // Selected as stored: without the labels the patch removes.
    Map<String, String> labels = new LinkedHashMap<>(pod.labels());
    stripped.forEach(labels::remove);
    String namespace = review.namespace();
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
      return new Decision(uid, patch(ops), Outcome.notSelected, selectedBy, stripped);
    }
    if (pod.gateDeclared()) {
      return new Decision(uid, patch(ops), Outcome.alreadyGated, selectedBy, stripped);
    }
    ops.add(appendGate(pod.gatesListed()));
    return new Decision(uid, patch(ops), Outcome.injected, selectedBy, stripped);
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
  public static ObjectNode answerAllowing(String uid) {
    return answer(new Decision(uid, Optional.empty(), Outcome.error, List.of(), List.of()));
  }

  private static boolean selects(ModelDeployment md, Map<String, String> labels) {
    List<RoleSpec> roles = md.getSpec().getRoles();
    return roles != null
        && roles.stream().anyMatch(role -> LabelSelectors.matches(role.getSelector(), labels));
  }

  private static Optional<String> patch(List<ObjectNode> ops) {
    return ops.isEmpty()
        ? Optional.empty()
        : Optional.of(JSON.createArrayNode().addAll(ops).toString());
  }

  /** RFC 6901: '~' is written ~0 and '/' ~1 in a path's segment, in that order. */
  private static ObjectNode removeLabel(String label) {
    return JSON.createObjectNode()
        .put("op", "remove")
        .put("path", "/metadata/labels/" + label.replace("~", "~0").replace("/", "~1"));
  }

  /**
   * Appends to the list where the pod has one (other gates kept, in order); JSON patch cannot
   * append to a list that is not there, so a pod without one gets the list whole.
   */
  private static ObjectNode appendGate(boolean listExists) {
    ObjectNode gate = JSON.createObjectNode().put("conditionType", GateNames.CONDITION_TYPE);
    ObjectNode op = JSON.createObjectNode().put("op", "add");
    if (listExists) {
      op.put("path", "/spec/readinessGates/-").set("value", gate);
    } else {
      op.put("path", "/spec/readinessGates").set("value", JSON.createArrayNode().add(gate));
    }
    return op;
  }
}

package io.kvguard.gate;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.verdict.GateDecision;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Plans the JSON patches that bring one pod's gate to a decision. Pure: the same pod, decision and
 * instant always give the same patch, and a pod that already shows the decision gives none.
 */
public final class GatePatchPlanner {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private GatePatchPlanner() {}

  /** The pods/status patch, or empty when status, reason and message already match. */
  public static Optional<String> conditionPatch(Pod pod, GateDecision decision, Instant now) {
    return conditionPatch(pod, decision, null, now);
  }

  /**
   * The pods/status patch that brings the condition to {@code decision} (null: leave it) and the
   * policy's verdict record to {@code update} (null: leave the records), in one request so the
   * decision and the figures it rests on never disagree; empty when both already match. (A
   * pods/status write keeps the metadata it changes: the API server's status strategy resets only
   * the spec, deletionTimestamp and ownerReferences.)
   */
  public static Optional<String> conditionPatch(
      Pod pod, GateDecision decision, RecordUpdate update, Instant now) {
    ArrayNode ops = JSON.arrayNode();
    if (decision != null) {
      conditionOps(pod, decision, now, ops);
    }
    if (update != null) {
      recordOps(pod, update, ops);
    }
    if (ops.isEmpty()) {
      return Optional.empty();
    }
    ArrayNode patch = guards(pod);
    patch.add(test("/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
    patch.addAll(ops);
    return Optional.of(write(patch));
  }

  private static void conditionOps(Pod pod, GateDecision decision, Instant now, ArrayNode patch) {
    String status = decision.open() ? "True" : "False";
    List<PodCondition> conditions =
        pod.getStatus() == null ? null : pod.getStatus().getConditions();
    int index = -1;
    if (conditions != null) {
      for (int i = 0; i < conditions.size(); i++) {
        if (GateNames.CONDITION_TYPE.equals(conditions.get(i).getType())) {
          index = i;
          break;
        }
      }
    }
    PodCondition current = index < 0 ? null : conditions.get(index);
    if (current != null
        && status.equals(current.getStatus())
        && decision.reason().name().equals(current.getReason())
        && decision.message().equals(current.getMessage())) {
      return;
    }
    // lastTransitionTime moves only when the status flips (Kubernetes condition conventions).
    String transition =
        current != null
                && status.equals(current.getStatus())
                && current.getLastTransitionTime() != null
            ? current.getLastTransitionTime()
            : now.truncatedTo(ChronoUnit.SECONDS).toString();
    ObjectNode condition =
        JSON.objectNode()
            .put("type", GateNames.CONDITION_TYPE)
            .put("status", status)
            .put("reason", decision.reason().name())
            .put("message", decision.message())
            .put("lastTransitionTime", transition);
    if (current != null && current.getLastProbeTime() != null) {
      condition.put("lastProbeTime", current.getLastProbeTime());
    }
    if (pod.getStatus() == null) {
      patch.add(
          op("add", "/status")
              .set("value", JSON.objectNode().set("conditions", JSON.arrayNode().add(condition))));
    } else if (conditions == null || conditions.isEmpty()) {
      // fabric8 reads a pod without a conditions list as an empty one, and JSON patch cannot append
      // to a list that is not there: write the whole list (it held nothing, and the resourceVersion
      // test keeps it so).
      patch.add(op("add", "/status/conditions").set("value", JSON.arrayNode().add(condition)));
    } else if (index < 0) {
      patch.add(op("add", "/status/conditions/-").set("value", condition));
    } else {
      patch.add(op("replace", "/status/conditions/" + index).set("value", condition));
    }
  }

  private static void recordOps(Pod pod, RecordUpdate update, ArrayNode patch) {
    String raw = VerdictRecords.annotation(pod);
    Map<String, VerdictRecord> current = VerdictRecords.of(pod);
    Map<String, VerdictRecord> next = new TreeMap<>(current);
    if (update.record() == null) {
      next.remove(update.modelDeployment());
    } else {
      next.put(update.modelDeployment(), update.record());
    }
    String wanted = next.isEmpty() ? null : VerdictRecords.write(next);
    boolean readable = raw == null || raw.isBlank() || !current.isEmpty();
    if (Objects.equals(wanted, raw)
        || (readable && next.equals(current) && (wanted == null) == (raw == null))) {
      return;
    }
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    String path = "/metadata/annotations/" + escape(GateNames.VERDICTS_ANNOTATION);
    if (wanted == null) {
      patch.add(op("remove", path));
    } else if (annotations == null || annotations.isEmpty()) {
      // fabric8 reads a pod without annotations as having an empty map, and JSON patch cannot add a
      // member to an object that is not there: write the whole object (it held nothing, and the
      // resourceVersion test keeps it so).
      patch.add(
          op("add", "/metadata/annotations")
              .set("value", JSON.objectNode().put(GateNames.VERDICTS_ANNOTATION, wanted)));
    } else {
      patch.add(op("add", path).put("value", wanted));
    }
  }

  private static String escape(String key) {
    return key.replace("~", "~0").replace("/", "~1");
  }

  /**
   * The label patch on the pod itself, or empty when the label already says what the decision says.
   */
  public static Optional<String> labelPatch(Pod pod, GateDecision decision) {
    return labelPatch(pod, decision, null);
  }

  /**
   * The label patch: the routing label as the decision says and, when {@code update} says the
   * policy publishes it, the context-length label as {@link #contextLengthRange} says (added or
   * changed only with the containers it was measured on, like the routing label; removed when there
   * is no range); empty when both already match.
   */
  public static Optional<String> labelPatch(Pod pod, GateDecision decision, RecordUpdate update) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    ArrayNode ops = JSON.arrayNode();
    boolean adds = false;
    String current = labels == null ? null : labels.get(GateNames.VERIFIED_LABEL);
    boolean wanted = decision.open() && !isPolicyRemoval(decision);
    if (wanted && !"true".equals(current)) {
      ops.add(op("add", labelPath(GateNames.VERIFIED_LABEL)).put("value", "true"));
      adds = true;
    } else if (!wanted && current != null) {
      ops.add(test(labelPath(GateNames.VERIFIED_LABEL), current));
      ops.add(op("remove", labelPath(GateNames.VERIFIED_LABEL)));
    }
    if (update != null && update.publishContextLength()) {
      String range = contextLengthRange(decision, update.record()).orElse(null);
      String published = labels == null ? null : labels.get(GateNames.CONTEXT_LENGTH_LABEL);
      if (range != null && !range.equals(published)) {
        ops.add(op("add", labelPath(GateNames.CONTEXT_LENGTH_LABEL)).put("value", range));
        adds = true;
      } else if (range == null && published != null) {
        ops.add(test(labelPath(GateNames.CONTEXT_LENGTH_LABEL), published));
        ops.add(op("remove", labelPath(GateNames.CONTEXT_LENGTH_LABEL)));
      }
    }
    if (ops.isEmpty()) {
      return Optional.empty();
    }
    // The resourceVersion test fences the labels like the condition: a writer whose read is older
    // than the pod (a deposed leader, a pass behind another's write) is refused instead of undoing
    // a newer decision.
    ArrayNode patch = guards(pod);
    patch.add(test("/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
    if (adds) {
      // A label routes traffic at once: it goes on only while the pod still runs the containers
      // that were judged (a restart between the two writes fails these tests, and the next pass
      // judges the new one).
      List<ContainerStatus> containers =
          pod.getStatus() == null ? null : pod.getStatus().getContainerStatuses();
      if (containers != null) {
        for (int i = 0; i < containers.size(); i++) {
          ContainerStatus container = containers.get(i);
          String at = "/status/containerStatuses/" + i;
          patch.add(
              container.getContainerID() == null
                  ? op("test", at + "/name").put("value", container.getName())
                  : test(at + "/containerID", container.getContainerID()));
          if (container.getRestartCount() != null) {
            patch.add(op("test", at + "/restartCount").put("value", container.getRestartCount()));
          }
        }
      }
    }
    if (labels == null) {
      // JSON patch cannot add a member to an object that is not there: write the whole map (only
      // adds can be
      // planned on a pod without labels).
      ObjectNode all = JSON.objectNode();
      ops.forEach(
          o ->
              all.put(
                  o.get("path")
                      .asText()
                      .substring("/metadata/labels/".length())
                      .replace("~1", "/")
                      .replace("~0", "~"),
                  o.get("value").asText()));
      patch.add(op("add", "/metadata/labels").set("value", all));
    } else {
      patch.addAll(ops);
    }
    return Optional.of(write(patch));
  }

  /**
   * The context a verified pod is proven to hold, as llm-d's context-length-aware plugin reads it:
   * "0-N" with N the smaller of the measured pool and the engine's own context length (the pool
   * alone when the engine reports no context length: llm-d takes an unlabelled pod for one that
   * accepts any length, so a verified pod is never left without the bound kvguard has). Empty (no
   * label) unless the decision opens the gate on a record that says Verified with a pool: a figure
   * kvguard did not measure is never published (Audit mode opens every gate, so the record's
   * verdict decides).
   */
  public static Optional<String> contextLengthRange(GateDecision decision, VerdictRecord record) {
    if (!decision.open()
        || isPolicyRemoval(decision)
        || record == null
        || !"Verified".equals(record.verdict())
        || record.poolTokens() == null) {
      return Optional.empty();
    }
    long admissible =
        record.engineContextTokens() == null
            ? record.poolTokens()
            : Math.min(record.poolTokens(), record.engineContextTokens());
    return admissible > 0 ? Optional.of("0-" + admissible) : Optional.empty();
  }

  /**
   * The label patch of a policy that lets go of a pod another policy still gates (the gate and
   * routing label are then the other's): only the context-length label this policy published goes;
   * empty when it does not publish it or the pod carries none.
   */
  public static Optional<String> contextLengthRemoval(Pod pod, RecordUpdate update) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    String published = labels == null ? null : labels.get(GateNames.CONTEXT_LENGTH_LABEL);
    if (update == null
        || !update.publishContextLength()
        || update.record() != null
        || published == null) {
      return Optional.empty();
    }
    ArrayNode patch = guards(pod);
    patch.add(test("/metadata/resourceVersion", pod.getMetadata().getResourceVersion()));
    patch.add(test(labelPath(GateNames.CONTEXT_LENGTH_LABEL), published));
    patch.add(op("remove", labelPath(GateNames.CONTEXT_LENGTH_LABEL)));
    return Optional.of(write(patch));
  }

  private static String labelPath(String key) {
    return "/metadata/labels/" + escape(key);
  }

  /**
   * What kvguard owns on a pod: its condition's status, reason and message, and the label. Two
   * reads with the same gate saw the same decision; a write planned on one and refused on the other
   * was overtaken by a newer one.
   */
  public record Gate(
      String status, String reason, String message, String label, VerdictRecord record) {}

  /**
   * The gate as {@code modelDeployment} sees it: with its own verdict record (null: none, or no
   * policy named).
   */
  public static Gate gateOf(Pod pod, String modelDeployment) {
    PodCondition condition = null;
    if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
      condition =
          pod.getStatus().getConditions().stream()
              .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
              .findFirst()
              .orElse(null);
    }
    Map<String, String> labels = pod.getMetadata().getLabels();
    return new Gate(
        condition == null ? null : condition.getStatus(),
        condition == null ? null : condition.getReason(),
        condition == null ? null : condition.getMessage(),
        labels == null ? null : labels.get(GateNames.VERIFIED_LABEL),
        modelDeployment == null ? null : VerdictRecords.of(pod, modelDeployment));
  }

  /**
   * A deleted policy opens the gate but takes its label away: the label means "verified", nothing
   * less.
   */
  private static boolean isPolicyRemoval(GateDecision decision) {
    return decision.reason() == io.kvguard.verdict.GateReason.PolicyRemoved;
  }

  private static ArrayNode guards(Pod pod) {
    ArrayNode patch = JSON.arrayNode();
    patch.add(test("/metadata/uid", pod.getMetadata().getUid()));
    return patch;
  }

  private static ObjectNode test(String path, String value) {
    return op("test", path).put("value", value);
  }

  private static ObjectNode op(String op, String path) {
    return JSON.objectNode().put("op", op).put("path", path);
  }

  private static String write(ArrayNode patch) {
    try {
      return MAPPER.writeValueAsString(patch);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a JSON patch", e);
    }
  }
}

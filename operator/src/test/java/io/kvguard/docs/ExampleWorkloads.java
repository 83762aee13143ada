package io.kvguard.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.api.model.PodSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pods the workload controllers create from the examples' templates, with the labels each
 * controller adds (read in its source), running with every container ready (the engine's own
 * readiness probe passed) and, as on a fresh pod, no kvguard condition yet.
 */
final class ExampleWorkloads {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ExampleWorkloads() {}

  /**
   * A pod to be created, and whether it is a leader of a LeaderWorkerSet group, a worker, or
   * neither.
   */
  record TemplatePod(String name, Map<String, String> labels, JsonNode spec) {}

  static List<TemplatePod> pods(JsonNode document) {
    String name = document.at("/metadata/name").asText();
    List<TemplatePod> pods = new ArrayList<>();
    switch (document.path("kind").asText()) {
      case "Deployment" -> {
        JsonNode template = document.at("/spec/template");
        for (int i = 0; i < 2; i++) {
          pods.add(
              new TemplatePod(
                  name + "-" + i,
                  labels(template.at("/metadata/labels"), Map.of()),
                  template.path("spec")));
        }
      }
      case "LeaderWorkerSet" -> {
        // kubernetes-sigs/lws v0.10.0 pkg/webhooks/pod_webhook.go: every pod gets the set name, its
        // group index and its worker index ("0" for the leader); without a leaderTemplate the
        // leader uses the workerTemplate.
        JsonNode lwt = document.at("/spec/leaderWorkerTemplate");
        JsonNode worker = lwt.path("workerTemplate");
        JsonNode leader = lwt.has("leaderTemplate") ? lwt.path("leaderTemplate") : worker;
        int size = lwt.path("size").asInt(1);
        for (int group = 0; group < 2; group++) {
          for (int index = 0; index < size; index++) {
            JsonNode template = index == 0 ? leader : worker;
            Map<String, String> added =
                Map.of(
                    "leaderworkerset.sigs.k8s.io/name",
                    name,
                    "leaderworkerset.sigs.k8s.io/group-index",
                    String.valueOf(group),
                    "leaderworkerset.sigs.k8s.io/worker-index",
                    String.valueOf(index));
            String podName = index == 0 ? name + "-" + group : name + "-" + group + "-" + index;
            pods.add(
                new TemplatePod(
                    podName,
                    labels(template.at("/metadata/labels"), added),
                    template.path("spec")));
          }
        }
      }
      case "LLMInferenceService" -> {
        // kserve/kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/workload_single_node.go:
        // singleNodeLabels plus
        // kserve.io/component and llm-d.ai/role ("both" without prefill); the pod spec is
        // spec.template.
        Map<String, String> added =
            Map.of(
                "app.kubernetes.io/component",
                "llminferenceservice-workload",
                "app.kubernetes.io/name",
                name,
                "app.kubernetes.io/part-of",
                "llminferenceservice",
                "kserve.io/component",
                "workload",
                "llm-d.ai/role",
                document.at("/spec/prefill").isMissingNode() ? "both" : "decode");
        for (int i = 0; i < 2; i++) {
          pods.add(new TemplatePod(name + "-kserve-" + i, added, document.at("/spec/template")));
        }
      }
      default -> {}
    }
    return pods;
  }

  /**
   * Running, every container ready, no kvguard condition: what a pod looks like before its first
   * probe.
   */
  static Pod running(String namespace, TemplatePod template, int ordinal) {
    PodSpec spec = JSON.convertValue(template.spec(), PodSpec.class);
    return new PodBuilder()
        .withNewMetadata()
        .withName(template.name())
        .withNamespace(namespace)
        .withLabels(template.labels())
        .endMetadata()
        .withSpec(spec)
        .withNewStatus()
        .withPhase("Running")
        .withPodIP("10.0.0." + (ordinal + 1))
        .withContainerStatuses(
            spec.getContainers().stream()
                .map(
                    c ->
                        new ContainerStatusBuilder()
                            .withName(c.getName())
                            .withReady(true)
                            .withRestartCount(0)
                            .withContainerID("containerd://" + template.name() + "-" + c.getName())
                            .build())
                .toList())
        .endStatus()
        .build();
  }

  /**
   * The kubelet's Ready condition: every container ready and every readiness gate's condition True
   * (kubernetes/kubernetes pkg/kubelet/status/generate.go, GeneratePodReadyCondition).
   */
  static boolean ready(Pod pod) {
    if (!containersReady(pod)) {
      return false;
    }
    List<PodReadinessGate> gates = pod.getSpec().getReadinessGates();
    List<PodCondition> conditions = pod.getStatus().getConditions();
    return gates == null
        || gates.stream()
            .allMatch(
                gate ->
                    conditions != null
                        && conditions.stream()
                            .anyMatch(
                                c ->
                                    gate.getConditionType().equals(c.getType())
                                        && "True".equals(c.getStatus())));
  }

  static boolean containersReady(Pod pod) {
    var statuses = pod.getStatus().getContainerStatuses();
    return statuses != null
        && !statuses.isEmpty()
        && statuses.stream().allMatch(s -> Boolean.TRUE.equals(s.getReady()));
  }

  private static Map<String, String> labels(JsonNode templateLabels, Map<String, String> added) {
    Map<String, String> labels = new LinkedHashMap<>();
    templateLabels.fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
    labels.putAll(added);
    return labels;
  }
}

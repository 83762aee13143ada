package io.kvguard.docs;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The routers in the examples and the rule each one routes by, as read in its source: which pods it
 * selects, and whether it waits for the pod's Ready condition (which readiness gates hold back) or
 * only for container readiness.
 */
final class ExampleRouters {

  /**
   * {@code readyCondition}: routes only pods whose Ready condition is True; otherwise containers
   * ready suffice.
   */
  record Router(String name, Map<String, String> selector, boolean readyCondition) {

    /** Whether this router sends traffic to {@code pod}, given that its selector selected it. */
    boolean routes(Pod pod) {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        return false;
      }
      return readyCondition ? ExampleWorkloads.ready(pod) : ExampleWorkloads.containersReady(pod);
    }
  }

  private ExampleRouters() {}

  static List<Router> of(JsonNode document) {
    String name = document.path("kind").asText() + " " + document.at("/metadata/name").asText();
    List<Router> routers = new ArrayList<>();
    switch (document.path("kind").asText()) {
      // kubernetes/endpointslice v0.36.3 utils.go podToEndpoint: ready = Ready condition True and
      // not terminating.
      case "Service" -> routers.add(new Router(name, map(document.at("/spec/selector")), true));
      // llm-d/llm-d-router v0.10.0 pkg/epp/controller/pod_reconciler.go updateDatastore: a pod that
      // is not Ready or no longer matches the pool's selector is removed from the picker's
      // datastore.
      case "InferencePool" ->
          routers.add(new Router(name, map(document.at("/spec/selector/matchLabels")), true));
      case "LLMInferenceService" -> {
        // kserve/kserve v0.20.0 pkg/controller/v1alpha2/llmisvc/config_merge.go: an empty inline
        // selector is filled with the workload labels (GetWorkloadLabelSelector); the pool is then
        // served by the same endpoint picker.
        JsonNode inline = document.at("/spec/router/scheduler/pool/spec/selector/matchLabels");
        Map<String, String> selector =
            inline.isMissingNode() || inline.isEmpty()
                ? Map.of(
                    "app.kubernetes.io/part-of",
                    "llminferenceservice",
                    "app.kubernetes.io/name",
                    document.at("/metadata/name").asText(),
                    "kserve.io/component",
                    "workload")
                : map(inline);
        if (!document.at("/spec/router/scheduler").isMissingNode()) {
          routers.add(new Router(name + " (managed InferencePool)", selector, true));
        }
      }
      // vllm-project/production-stack vllm-stack-0.1.12 src/vllm_router/service_discovery.py
      // K8sPodIPServiceDiscovery: watches pods of --k8s-label-selector, routes once every container
      // is ready.
      case "Deployment" ->
          document
              .at("/spec/template/spec/containers")
              .forEach(
                  container -> {
                    List<String> args = new ArrayList<>();
                    container.path("args").forEach(a -> args.add(a.asText()));
                    String selector = lastValue(args, "--k8s-label-selector");
                    if (selector != null) {
                      if (!"pod-ip".equals(lastValue(args, "--k8s-service-discovery-type"))) {
                        throw new AssertionError(name + ": only pod-ip discovery watches pods");
                      }
                      routers.add(new Router(name + " (vLLM router)", equalities(selector), false));
                    }
                  });
      default -> {}
    }
    return routers;
  }

  /** argparse's store action: the last occurrence of an option wins. */
  private static String lastValue(List<String> args, String option) {
    String value = null;
    for (int i = 0; i + 1 < args.size(); i++) {
      if (args.get(i).equals(option)) {
        value = args.get(i + 1);
      }
    }
    return value;
  }

  private static Map<String, String> equalities(String selector) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String term : selector.split(",")) {
      String[] kv = term.split("=", -1);
      if (kv.length != 2 || kv[0].isBlank() || term.contains("!")) {
        throw new AssertionError("the examples' router selectors are equalities only: " + term);
      }
      labels.put(kv[0].trim(), kv[1].trim());
    }
    return labels;
  }

  private static Map<String, String> map(JsonNode object) {
    Map<String, String> labels = new LinkedHashMap<>();
    object.fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
    return labels;
  }
}

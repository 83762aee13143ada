package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kvguard.gate.GatePatchPlanner;
import io.kvguard.gate.PodGate;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.ProbeException;
import io.kvguard.verdict.GateDecision;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The least any gate keeper must do: list the pods once, then per pod the GETs one SGLang probe
 * makes and one pods/status JSON patch, with the operator's HTTP client settings, its fabric8
 * client and its probe concurrency. No verdicts, no labels, no status, no events, no watches of its
 * own.
 */
final class Floor {
  private static final List<String> PROBE_PATHS = List.of("/server_info", "/v1/models");

  private Floor() {}

  /**
   * Runs the floor over every pod of {@code namespace}; returns when every patch has been answered.
   * With {@code label}, each pod's condition patch is followed by the routing-label patch
   * (kvguard's contract: the least a gate keeper with a label must write).
   */
  static void run(
      KubernetesClient client, String namespace, int concurrency, GateDecision open, boolean label)
      throws Exception {
    EngineHttp http = EngineHttp.createDefault();
    List<Pod> pods = client.pods().inNamespace(namespace).list().getItems();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (Pod pod : pods) {
        done.add(
            pool.submit(
                () -> {
                  int port =
                      pod.getSpec().getContainers().get(0).getPorts().get(0).getContainerPort();
                  EngineEndpoint endpoint =
                      EngineEndpoint.of(
                          "http", pod.getStatus().getPodIP(), port, Duration.ofSeconds(5));
                  for (String path : PROBE_PATHS) {
                    try {
                      http.getOk(endpoint, path);
                    } catch (ProbeException e) {
                      throw new IllegalStateException("floor probe failed: " + e.getMessage());
                    }
                  }
                  String patch =
                      GatePatchPlanner.conditionPatch(pod, open, Instant.now()).orElseThrow();
                  Pod written =
                      client
                          .pods()
                          .inNamespace(namespace)
                          .resource(PodGate.address(pod))
                          .subresource("status")
                          .patch(PatchContext.of(PatchType.JSON), patch);
                  if (label) {
                    client
                        .pods()
                        .inNamespace(namespace)
                        .resource(PodGate.address(pod))
                        .patch(
                            PatchContext.of(PatchType.JSON),
                            GatePatchPlanner.labelPatch(written, open).orElseThrow());
                  }
                  return null;
                }));
      }
      for (Future<?> future : done) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}

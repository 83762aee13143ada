package io.kvguard.testkit;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * Plays the kubelet's part on an API server with no nodes: creates running engine pods that point
 * at fake engines on loopback, and restarts their engine containers (new container ID, restart
 * count + 1).
 */
public final class SimulatedPods {
  public static final String ENGINE_CONTAINER = "engine";
  public static final String ENGINE_PORT_NAME = "http";

  private final KubernetesClient client;

  public SimulatedPods(KubernetesClient client) {
    this.client = client;
  }

  /** A Running pod whose engine container declares port {@code http} = the fake engine's port. */
  public Pod createRunning(
      String namespace,
      String name,
      Map<String, String> labels,
      int enginePort,
      boolean readinessGate) {
    PodBuilder builder =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(labels)
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName(ENGINE_CONTAINER)
            .withImage("lmsysorg/sglang:v0.5.22")
            .addNewPort()
            .withName(ENGINE_PORT_NAME)
            .withContainerPort(enginePort)
            .endPort()
            .endContainer()
            .addNewContainer()
            .withName("sidecar")
            .withImage("busybox")
            .endContainer()
            .endSpec();
    if (readinessGate) {
      builder
          .editSpec()
          .addNewReadinessGate()
          .withConditionType("kvguard.io/pool-verified")
          .endReadinessGate()
          .endSpec();
    }
    Pod created = client.pods().inNamespace(namespace).resource(builder.build()).create();
    return client
        .pods()
        .inNamespace(namespace)
        .withName(name)
        .editStatus(
            pod ->
                new PodBuilder(pod)
                    .withNewStatus()
                    .withPhase("Running")
                    .withPodIP("127.0.0.1")
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus("False")
                    .endCondition()
                    .addNewCondition()
                    .withType("ContainersReady")
                    .withStatus("True")
                    .endCondition()
                    .withContainerStatuses(running(ENGINE_CONTAINER, 0), running("sidecar", 0))
                    .endStatus()
                    .build());
  }

  /**
   * The engine container restarts: a new container ID and one more restart, as the kubelet reports
   * it.
   */
  public Pod restartEngine(String namespace, String name) {
    return client
        .pods()
        .inNamespace(namespace)
        .withName(name)
        .editStatus(
            pod -> {
              int restarts =
                  pod.getStatus().getContainerStatuses().stream()
                      .filter(s -> s.getName().equals(ENGINE_CONTAINER))
                      .findFirst()
                      .orElseThrow()
                      .getRestartCount();
              return new PodBuilder(pod)
                  .editStatus()
                  .withContainerStatuses(
                      running(ENGINE_CONTAINER, restarts + 1), running("sidecar", 0))
                  .endStatus()
                  .build();
            });
  }

  private static io.fabric8.kubernetes.api.model.ContainerStatus running(
      String container, int restarts) {
    return new ContainerStatusBuilder()
        .withName(container)
        .withContainerID("containerd://" + UUID.randomUUID().toString().replace("-", ""))
        .withRestartCount(restarts)
        .withReady(true)
        .withImage("image")
        .withImageID("image-id")
        .withNewState()
        .withNewRunning()
        .withStartedAt(Instant.now().toString())
        .endRunning()
        .endState()
        .build();
  }
}

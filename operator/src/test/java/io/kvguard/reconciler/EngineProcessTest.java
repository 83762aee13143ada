package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.junit.jupiter.api.Test;

/**
 * Which container of a pod is the engine, where it is probed, and why a pod cannot be probed yet.
 */
class EngineProcessTest {
  private static final IntOrString HTTP = new IntOrString("http");

  /**
   * A running pod with a sidecar first and the engine container (port http 30000, metrics 9090)
   * second.
   */
  private static PodBuilder running() {
    return new PodBuilder()
        .withNewMetadata()
        .withName("prefill-0")
        .withNamespace("inference")
        .endMetadata()
        .withNewSpec()
        .addToContainers(
            new ContainerBuilder()
                .withName("proxy")
                .addNewPort()
                .withName("admin")
                .withContainerPort(15000)
                .endPort()
                .build())
        .addToContainers(
            new ContainerBuilder()
                .withName("engine")
                .addNewPort()
                .withName("http")
                .withContainerPort(30000)
                .endPort()
                .addNewPort()
                .withName("metrics")
                .withContainerPort(9090)
                .endPort()
                .build())
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .withPodIP("10.0.0.7")
        .addToContainerStatuses(
            new ContainerStatusBuilder()
                .withName("proxy")
                .withContainerID("containerd://proxy")
                .withRestartCount(0)
                .withNewState()
                .withNewRunning()
                .endRunning()
                .endState()
                .build())
        .addToContainerStatuses(
            new ContainerStatusBuilder()
                .withName("engine")
                .withContainerID("containerd://abc")
                .withRestartCount(2)
                .withNewState()
                .withNewRunning()
                .endRunning()
                .endState()
                .build())
        .endStatus();
  }

  private static EngineProcess probeable(EngineProcess.Resolution resolution) {
    assertThat(resolution).isInstanceOf(EngineProcess.Probeable.class);
    return ((EngineProcess.Probeable) resolution).process();
  }

  private static EngineProcess.NotProbeable notProbeable(EngineProcess.Resolution resolution) {
    assertThat(resolution).isInstanceOf(EngineProcess.NotProbeable.class);
    return (EngineProcess.NotProbeable) resolution;
  }

  @Test
  void theEngineIsTheContainerDeclaringTheRolesPortByNameOrNumber() {
    EngineProcess byName = probeable(EngineProcess.resolve(running().build(), HTTP));
    EngineProcess byNumber =
        probeable(EngineProcess.resolve(running().build(), new IntOrString(30000)));

    assertThat(byName)
        .isEqualTo(new EngineProcess("engine", "containerd://abc", 2, "10.0.0.7", 30000, 30000));
    assertThat(byNumber).isEqualTo(byName);
  }

  @Test
  void metricsAreReadOnTheRolesMetricsPortByNameOrNumber() {
    assertThat(
            probeable(EngineProcess.resolve(running().build(), HTTP, new IntOrString("metrics")))
                .metricsPort())
        .isEqualTo(9090);
    assertThat(
            probeable(EngineProcess.resolve(running().build(), HTTP, new IntOrString(8002)))
                .metricsPort())
        .isEqualTo(8002);
  }

  @Test
  void aRestartIsANewProcess() {
    Pod restarted =
        running()
            .editStatus()
            .editLastContainerStatus()
            .withRestartCount(3)
            .endContainerStatus()
            .endStatus()
            .build();

    EngineProcess before = probeable(EngineProcess.resolve(running().build(), HTTP));
    EngineProcess after = probeable(EngineProcess.resolve(restarted, HTTP));

    assertThat(after.containerID()).isEqualTo(before.containerID());
    assertThat(after.restartCount()).isEqualTo(3);
    assertThat(after).isNotEqualTo(before);
  }

  @Test
  void aPodWhoseContainersDoNotDeclareThePortIsMisconfigured() {
    EngineProcess.NotProbeable noPort =
        notProbeable(EngineProcess.resolve(running().build(), new IntOrString("grpc")));
    EngineProcess.NotProbeable noMetricsPort =
        notProbeable(EngineProcess.resolve(running().build(), HTTP, new IntOrString("prometheus")));

    assertThat(noPort.message()).isEqualTo("no container declares port grpc");
    assertThat(noPort.misconfigured()).isTrue();
    assertThat(noMetricsPort.message())
        .isEqualTo(
            "engine container engine declares no port named prometheus (the role's metricsPort)");
    assertThat(noMetricsPort.misconfigured()).isTrue();
  }

  @Test
  void aHostNetworkPodIsNeverProbed() {
    EngineProcess.NotProbeable host =
        notProbeable(
            EngineProcess.resolve(
                running().editSpec().withHostNetwork(true).endSpec().build(), HTTP));

    assertThat(host.message()).isEqualTo(EngineProcess.HOST_NETWORK);
    assertThat(host.misconfigured()).isTrue();
  }

  @Test
  void aPodNotReadyToBeProbedSaysWhatItWaitsFor() {
    assertThat(
            notProbeable(
                EngineProcess.resolve(
                    running().editStatus().withPhase("Pending").endStatus().build(), HTTP)))
        .satisfies(
            p -> {
              assertThat(p.message()).isEqualTo("pod phase is Pending");
              assertThat(p.misconfigured()).isFalse();
            });
    assertThat(
            notProbeable(
                    EngineProcess.resolve(
                        running()
                            .editStatus()
                            .editLastContainerStatus()
                            .withNewState()
                            .withNewWaiting()
                            .withReason("CrashLoopBackOff")
                            .endWaiting()
                            .endState()
                            .endContainerStatus()
                            .endStatus()
                            .build(),
                        HTTP))
                .message())
        .isEqualTo("engine container engine is not running");
    assertThat(
            notProbeable(
                    EngineProcess.resolve(
                        running().editStatus().withPodIP(null).endStatus().build(), HTTP))
                .message())
        .isEqualTo("pod has no IP yet");
    EngineProcess.NotProbeable terminating =
        notProbeable(
            EngineProcess.resolve(
                running()
                    .editMetadata()
                    .withDeletionTimestamp("2026-01-01T00:00:00Z")
                    .endMetadata()
                    .build(),
                HTTP));
    assertThat(terminating.message()).isEqualTo("pod is terminating");
    // What is known of the container is kept, so a restart while it waits is still seen.
    assertThat(terminating.containerID()).isEqualTo("containerd://abc");
    assertThat(terminating.restartCount()).isEqualTo(2);
  }
}

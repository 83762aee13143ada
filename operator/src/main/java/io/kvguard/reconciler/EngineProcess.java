package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.gate.ProcessIdentity;
import java.util.List;

/**
 * The engine process of one pod: the container that declares the role's port, identified by its
 * container ID and restart count. A new identity means a new process whose pool nobody has measured
 * yet. {@code metricsPort} is where it serves its metrics pages (the role's metricsPort), or {@code
 * port}.
 */
record EngineProcess(
    String containerName,
    String containerID,
    int restartCount,
    String podIP,
    int port,
    int metricsPort) {

  /** This process's identity ({@link ProcessIdentity}): probe results are kept for it alone. */
  String identity() {
    return ProcessIdentity.of(containerID, restartCount);
  }

  /** Either a probeable process or why the pod cannot be probed (yet). */
  sealed interface Resolution {}

  record Probeable(EngineProcess process) implements Resolution {}

  /**
   * {@code misconfigured} distinguishes "no container declares the port" from "not running yet".
   */
  record NotProbeable(
      String message, boolean misconfigured, String containerID, Integer restartCount)
      implements Resolution {}

  static Resolution resolve(Pod pod, IntOrString rolePort) {
    return resolve(pod, rolePort, null);
  }

  /**
   * {@code roleMetricsPort}: a number, the name of a port the engine container declares, or null
   * for {@code port}.
   */
  static Resolution resolve(Pod pod, IntOrString rolePort, IntOrString roleMetricsPort) {
    Container container = null;
    int port = -1;
    for (Container candidate :
        pod.getSpec() == null ? List.<Container>of() : pod.getSpec().getContainers()) {
      for (ContainerPort declared :
          candidate.getPorts() == null ? List.<ContainerPort>of() : candidate.getPorts()) {
        boolean byNumber =
            rolePort.getIntVal() != null
                && rolePort.getIntVal().equals(declared.getContainerPort());
        boolean byName =
            rolePort.getStrVal() != null && rolePort.getStrVal().equals(declared.getName());
        if ((byNumber || byName) && container == null) {
          container = candidate;
          port = declared.getContainerPort();
        }
      }
    }
    if (container == null) {
      return new NotProbeable("no container declares port " + describe(rolePort), true, null, null);
    }
    int metricsPort = port;
    if (roleMetricsPort != null && roleMetricsPort.getIntVal() != null) {
      metricsPort = roleMetricsPort.getIntVal();
    } else if (roleMetricsPort != null && roleMetricsPort.getStrVal() != null) {
      Integer named = null;
      for (ContainerPort declared : container.getPorts()) {
        if (roleMetricsPort.getStrVal().equals(declared.getName())) {
          named = declared.getContainerPort();
        }
      }
      if (named == null) {
        return new NotProbeable(
            "engine container "
                + container.getName()
                + " declares no port named "
                + roleMetricsPort.getStrVal()
                + " (the role's metricsPort)",
            true,
            null,
            null);
      }
      metricsPort = named;
    }
    ContainerStatus status = null;
    if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
      for (ContainerStatus candidate : pod.getStatus().getContainerStatuses()) {
        if (container.getName().equals(candidate.getName())) {
          status = candidate;
        }
      }
    }
    String containerID = status == null ? null : status.getContainerID();
    Integer restarts = status == null ? null : status.getRestartCount();
    if (pod.getMetadata().getDeletionTimestamp() != null) {
      return new NotProbeable("pod is terminating", false, containerID, restarts);
    }
    if (usesHostNetwork(pod)) {
      return new NotProbeable(HOST_NETWORK, true, containerID, restarts);
    }
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    if (!"Running".equals(phase)) {
      return new NotProbeable(
          "pod phase is " + (phase == null ? "unknown" : phase), false, containerID, restarts);
    }
    if (status == null
        || status.getState() == null
        || status.getState().getRunning() == null
        || containerID == null
        || containerID.isBlank()) {
      return new NotProbeable(
          "engine container " + container.getName() + " is not running",
          false,
          containerID,
          restarts);
    }
    String podIP = pod.getStatus().getPodIP();
    if (podIP == null || podIP.isBlank()) {
      return new NotProbeable("pod has no IP yet", false, containerID, restarts);
    }
    int restartCount = status.getRestartCount() == null ? 0 : status.getRestartCount();
    return new Probeable(
        new EngineProcess(
            container.getName(), containerID, restartCount, podIP, port, metricsPort));
  }

  /** Why a hostNetwork pod is not probed (docs/runbook.md, ProbeFailed). */
  static final String HOST_NETWORK =
      "pod uses hostNetwork: its IP is the node's, where the kubelet, node exporters"
          + " and every host port answer, so kvguard does not send it probes or credentials; run the engine on the pod"
          + " network (hostNetwork: false)";

  /**
   * A pod on the node's network: its IP is the node's, not one a tenant's own pods could be reached
   * at.
   */
  static boolean usesHostNetwork(Pod pod) {
    return pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork());
  }

  private static String describe(IntOrString port) {
    return port.getIntVal() != null ? String.valueOf(port.getIntVal()) : port.getStrVal();
  }
}

package io.kvguard.gate;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Objects;

/**
 * What makes a process the same process: its container's ID and restart count, as the kubelet
 * reports them. Another value is another process, whose pool nobody has measured: probe results are
 * kept per identity, and a gate is not opened onto processes other than those it was judged on.
 */
public final class ProcessIdentity {
  private ProcessIdentity() {}

  /** The identity of the process a container runs now. */
  public static String of(String containerID, Integer restartCount) {
    return containerID + "#" + restartCount;
  }

  /** Every container of the pod, by name, with the identity of its process. */
  public static List<String> ofContainers(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return List.of();
    }
    return pod.getStatus().getContainerStatuses().stream().map(ProcessIdentity::named).toList();
  }

  /**
   * Whether {@code now} runs the very processes {@code judged} ran (same containers, none
   * restarted).
   */
  public static boolean sameProcesses(Pod judged, Pod now) {
    return Objects.equals(ofContainers(judged), ofContainers(now));
  }

  private static String named(ContainerStatus status) {
    return status.getName() + "|" + of(status.getContainerID(), status.getRestartCount());
  }
}

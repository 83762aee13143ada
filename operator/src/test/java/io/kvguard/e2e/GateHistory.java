package io.kvguard.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kvguard.gate.GateNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Every state of one pod's gate as a watch delivers it, so a scenario can prove a gate closed and
 * re-opened even when the closed state lasts only milliseconds.
 */
final class GateHistory implements Watcher<Pod>, AutoCloseable {

  /**
   * One observed state: the condition's status and reason, and whether the routing label was
   * present.
   */
  record State(String status, String reason, boolean labelled) {
    boolean open() {
      return "True".equals(status);
    }
  }

  private final List<State> states = new ArrayList<>();
  private final Watch watch;

  GateHistory(ClusterDriver cluster, String podName) {
    watch = cluster.client().pods().inNamespace(cluster.namespace()).withName(podName).watch(this);
  }

  @Override
  public synchronized void eventReceived(Action action, Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return;
    }
    pod.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst()
        .map(
            c ->
                new State(
                    c.getStatus(),
                    c.getReason(),
                    pod.getMetadata().getLabels() != null
                        && "true"
                            .equals(pod.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL))))
        .filter(state -> states.isEmpty() || !Objects.equals(states.get(states.size() - 1), state))
        .ifPresent(states::add);
  }

  @Override
  public void onClose(WatcherException cause) {
    // The scenario asserts on what was recorded; a closed watch shows up as a missing state.
  }

  synchronized List<State> states() {
    return List.copyOf(states);
  }

  /** Whether the gate was seen shut (and unlabelled), then open again, in that order. */
  synchronized boolean closedThenReopened() {
    int closed = -1;
    for (int i = 0; i < states.size(); i++) {
      if (!states.get(i).open() && !states.get(i).labelled()) {
        closed = i;
        break;
      }
    }
    if (closed < 0) {
      return false;
    }
    return states.subList(closed, states.size()).stream()
        .anyMatch(s -> s.open() && s.reason().equals("PoolSufficient"));
  }

  @Override
  public void close() {
    watch.close();
  }
}

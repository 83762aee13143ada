package io.kvguard.demo;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns successive snapshots into one line per change a user would notice (like {@code kubectl get
 * -w}): a gate or label flipping, an engine restart, the ModelDeployment's Verified or Ready
 * moving, a new event.
 */
final class ChangeFeed {
  private final Instant start;
  private final Map<String, String> pods = new HashMap<>();
  private final Map<String, Integer> restarts = new HashMap<>();
  private final Map<String, String> modelDeployments = new HashMap<>();
  private final Map<String, Integer> eventOrder = new HashMap<>();
  private final Map<String, Integer> eventCounts = new HashMap<>();

  ChangeFeed(Instant start) {
    this.start = start;
  }

  List<String> changes(ClusterSnapshot snapshot) {
    List<String> lines = new ArrayList<>();
    String at =
        String.format("%+6.1fs  ", Duration.between(start, snapshot.at()).toMillis() / 1000.0);
    for (Pod pod : snapshot.pods()) {
      String name = pod.getMetadata().getName();
      int restartCount = ClusterSnapshot.engineRestarts(pod);
      Integer before = restarts.put(name, restartCount);
      if (before != null && before != restartCount) {
        lines.add(
            at
                + "pod/"
                + name
                + "  engine container restarted (restart count "
                + restartCount
                + "): a new process whose pool nobody has measured");
      }
      Optional<PodCondition> gate = ClusterSnapshot.gate(pod);
      String label =
          ClusterSnapshot.labelled(pod)
              ? GateNames.VERIFIED_LABEL + "=true"
              : "no " + GateNames.VERIFIED_LABEL;
      String state =
          gate.map(
                  c ->
                      GateNames.CONDITION_TYPE
                          + "="
                          + c.getStatus()
                          + "  "
                          + c.getReason()
                          + ", "
                          + label
                          + "  "
                          + c.getMessage())
              .orElse(null);
      if (state != null && !Objects.equals(pods.put(name, state), state)) {
        lines.add(at + "pod/" + name + "  " + state);
      }
    }
    for (ModelDeployment md : snapshot.modelDeployments()) {
      String name = md.getMetadata().getName();
      String state = describe(snapshot, name);
      if (state != null && !Objects.equals(modelDeployments.put(name, state), state)) {
        lines.add(at + "mdep/" + name + "  " + state);
      }
    }
    for (Event event : snapshot.events()) {
      // kvguard keeps one Event per reason and updates it: a new count is news too, as kubectl get
      // events -w shows.
      String key = event.getMetadata().getName();
      eventOrder.putIfAbsent(key, eventOrder.size());
      int count = event.getCount() == null ? 1 : event.getCount();
      Integer seen = eventCounts.put(key, count);
      if (seen == null || seen != count) {
        lines.add(
            at
                + "event  "
                + event.getType()
                + " "
                + event.getReason()
                + (count > 1 ? " (x" + count + ")" : "")
                + "  "
                + event.getMessage());
      }
    }
    return lines;
  }

  private static String describe(ClusterSnapshot snapshot, String name) {
    ModelDeployment md = snapshot.modelDeployment(name).orElseThrow();
    if (md.getStatus() == null) {
      return null;
    }
    return "verified "
        + md.getStatus().verified
        + ", Ready="
        + snapshot.condition(name, "Ready").orElse("<none>");
  }

  /**
   * Events in the order this feed first saw them (the API server's list order carries no meaning).
   */
  Comparator<Event> eventOrder() {
    return Comparator.comparing(
        e -> eventOrder.getOrDefault(e.getMetadata().getName(), Integer.MAX_VALUE));
  }
}

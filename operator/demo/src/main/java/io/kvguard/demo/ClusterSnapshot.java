package io.kvguard.demo;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.SimulatedPods;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One read of everything a user would look at with kubectl in the namespace: ModelDeployments,
 * pods, events.
 */
record ClusterSnapshot(
    Instant at, List<ModelDeployment> modelDeployments, List<Pod> pods, List<Event> events) {

  static ClusterSnapshot read(KubernetesClient client, String namespace, Instant now) {
    List<ModelDeployment> mds =
        client.resources(ModelDeployment.class).inNamespace(namespace).list().getItems().stream()
            .sorted(Comparator.comparing(md -> md.getMetadata().getName()))
            .toList();
    List<Pod> pods =
        client.pods().inNamespace(namespace).list().getItems().stream()
            .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
            .toList();
    List<Event> events = client.v1().events().inNamespace(namespace).list().getItems();
    return new ClusterSnapshot(now, mds, pods, events);
  }

  /** Every namespace at once, for answering kubectl in --keep-running mode. */
  static ClusterSnapshot readAll(KubernetesClient client, Instant now) {
    Comparator<io.fabric8.kubernetes.api.model.HasMetadata> byName =
        Comparator.comparing(
                (io.fabric8.kubernetes.api.model.HasMetadata o) -> o.getMetadata().getNamespace())
            .thenComparing(o -> o.getMetadata().getName());
    List<ModelDeployment> mds =
        client.resources(ModelDeployment.class).inAnyNamespace().list().getItems().stream()
            .sorted(byName)
            .toList();
    List<Pod> pods =
        client.pods().inAnyNamespace().list().getItems().stream().sorted(byName).toList();
    List<Event> events = client.v1().events().inAnyNamespace().list().getItems();
    return new ClusterSnapshot(now, mds, pods, events);
  }

  /** The same objects, seen at another instant (ages are computed from it). */
  ClusterSnapshot at(Instant instant) {
    return new ClusterSnapshot(instant, modelDeployments, pods, events);
  }

  Optional<ModelDeployment> modelDeployment(String name) {
    return modelDeployments.stream()
        .filter(md -> md.getMetadata().getName().equals(name))
        .findFirst();
  }

  Optional<Pod> pod(String name) {
    return pods.stream().filter(p -> p.getMetadata().getName().equals(name)).findFirst();
  }

  static Optional<PodCondition> gate(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  static boolean labelled(Pod pod) {
    return pod.getMetadata().getLabels() != null
        && "true".equals(pod.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL));
  }

  static int engineRestarts(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return 0;
    }
    return pod.getStatus().getContainerStatuses().stream()
        .filter(s -> SimulatedPods.ENGINE_CONTAINER.equals(s.getName()))
        .map(s -> s.getRestartCount() == null ? 0 : s.getRestartCount())
        .findFirst()
        .orElse(0);
  }

  /** Whether the pod's gate shows exactly this status and reason. */
  boolean gateIs(String podName, String status, String reason) {
    return pod(podName)
        .flatMap(ClusterSnapshot::gate)
        .filter(c -> status.equals(c.getStatus()) && reason.equals(c.getReason()))
        .isPresent();
  }

  boolean isLabelled(String podName) {
    return pod(podName).map(ClusterSnapshot::labelled).orElse(false);
  }

  Optional<String> condition(String mdName, String type) {
    return modelDeployment(mdName)
        .filter(md -> md.getStatus() != null && md.getStatus().conditions != null)
        .flatMap(
            md ->
                md.getStatus().conditions.stream()
                    .filter(c -> type.equals(c.getType()))
                    .findFirst())
        .map(c -> c.getStatus());
  }

  /** The verdict the ModelDeployment's status records for the pod. */
  Optional<PodVerdictStatus> verdict(String mdName, String podName) {
    return modelDeployment(mdName)
        .filter(md -> md.getStatus() != null && md.getStatus().pods != null)
        .flatMap(
            md ->
                md.getStatus().pods.stream()
                    .filter(p -> Objects.equals(p.name, podName))
                    .findFirst());
  }

  /**
   * How many transitions the Events with this reason announced (kvguard keeps one per
   * ModelDeployment and reason).
   */
  int eventCount(String reason) {
    return events.stream()
        .filter(e -> reason.equals(e.getReason()))
        .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
        .sum();
  }

  boolean hasEvent(String reason, String messagePart) {
    return events.stream()
        .anyMatch(
            e ->
                reason.equals(e.getReason())
                    && e.getMessage() != null
                    && e.getMessage().contains(messagePart));
  }
}

package io.kvguard.e2e;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.FakeEngineOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A cluster the gate scenarios run on, with the operator watching it: the embedded API server in
 * CI, or any real cluster. Only creating engine pods and restarting engines differ between the two;
 * everything else is plain Kubernetes API calls, shared here.
 */
public interface ClusterDriver extends AutoCloseable {

  KubernetesClient client();

  /** The namespace the scenario's pods and ModelDeployments live in (the operator watches it). */
  String namespace();

  /**
   * How long a scenario waits for the operator to reach a state (pods on real clusters take a
   * while).
   */
  Duration patience();

  /**
   * Whether a kubelet computes the pods' Ready condition from their readiness gates (real clusters
   * only).
   */
  boolean kubeletComputesReadiness();

  /**
   * A Running pod whose engine container (port named {@value #ENGINE_PORT}) serves a fake engine
   * with these figures, and which declares the readiness gate. Returns once the engine container
   * runs.
   */
  void createEnginePod(String name, Map<String, String> labels, FakeEngineOptions engine);

  /**
   * The pod's engine process restarts (a new container, restart count + 1) and comes back with
   * these figures.
   */
  void restartEngine(String name, FakeEngineOptions engine);

  @Override
  void close();

  String ENGINE_PORT = "http";

  default ModelDeployment create(ModelDeployment md) {
    md.getMetadata().setNamespace(namespace());
    return client().resources(ModelDeployment.class).inNamespace(namespace()).resource(md).create();
  }

  default void delete(String modelDeployment) {
    client()
        .resources(ModelDeployment.class)
        .inNamespace(namespace())
        .withName(modelDeployment)
        .delete();
  }

  default ModelDeployment modelDeployment(String name) {
    return client().resources(ModelDeployment.class).inNamespace(namespace()).withName(name).get();
  }

  default Pod pod(String name) {
    return client().pods().inNamespace(namespace()).withName(name).get();
  }

  default Optional<PodCondition> gate(String podName) {
    Pod pod = pod(podName);
    if (pod == null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  default boolean labelled(String podName) {
    Pod pod = pod(podName);
    return pod != null
        && pod.getMetadata().getLabels() != null
        && "true".equals(pod.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL));
  }

  /** The pod's own Ready condition, as the kubelet computes it. */
  default Optional<String> podReady(String podName) {
    Pod pod = pod(podName);
    if (pod == null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .map(PodCondition::getStatus)
        .findFirst();
  }

  default Optional<String> condition(String modelDeployment, String type) {
    ModelDeployment md = modelDeployment(modelDeployment);
    if (md == null || md.getStatus() == null || md.getStatus().conditions == null) {
      return Optional.empty();
    }
    return md.getStatus().conditions.stream()
        .filter(c -> type.equals(c.getType()))
        .map(c -> c.getStatus())
        .findFirst();
  }

  default Optional<PodVerdictStatus> verdict(String modelDeployment, String podName) {
    ModelDeployment md = modelDeployment(modelDeployment);
    if (md == null || md.getStatus() == null || md.getStatus().pods == null) {
      return Optional.empty();
    }
    return md.getStatus().pods.stream().filter(p -> Objects.equals(podName, p.name)).findFirst();
  }

  default List<Event> events() {
    return client().v1().events().inNamespace(namespace()).list().getItems();
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.kvguard.gate.GateNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A pod informer's store that keeps of each pod only what kvguard reads (a copy made before the pod is stored, so
 * the parsed pod is garbage once its event is handled): managedFields, environment variables, volumes, probes,
 * resources, images and most annotations are often 90 % of a pod and kvguard reads none of them.
 *
 * <p>Kept: name, namespace, uid, resourceVersion, labels, deletionTimestamp; the verdict-record annotation, and the
 * keys of the other annotations with empty values (the gate's patch planner writes the whole annotations object
 * only when a pod has none: an emptied map would make it replace annotations the pod has); each container's name
 * and ports, hostNetwork, readinessGates; phase, podIP, conditions (the gate patch replaces its own by index) and
 * each container status's name, containerID, restartCount and state. {@code LeanPodStoreTest} checks that every
 * gate patch and engine-process decision is the same on the lean copy as on the whole pod.
 */
final class LeanPodStore extends BasicItemStore<Pod> {

  LeanPodStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public Pod put(String key, Pod pod) {
    return super.put(key, lean(pod));
  }

  /** The parts of {@code pod} kvguard reads, in new objects (nothing of the original is referenced but strings). */
  static Pod lean(Pod pod) {
    Pod lean = new Pod();
    lean.setApiVersion(pod.getApiVersion());
    lean.setKind(pod.getKind());
    lean.setMetadata(meta(pod.getMetadata()));
    if (pod.getSpec() != null) {
      PodSpec spec = new PodSpec();
      List<Container> containers = new ArrayList<>();
      for (Container full : orEmpty(pod.getSpec().getContainers())) {
        Container container = new Container();
        container.setName(full.getName());
        container.setPorts(full.getPorts());
        containers.add(container);
      }
      spec.setContainers(containers);
      spec.setHostNetwork(pod.getSpec().getHostNetwork());
      spec.setReadinessGates(pod.getSpec().getReadinessGates());
      lean.setSpec(spec);
    }
    if (pod.getStatus() != null) {
      PodStatus status = new PodStatus();
      status.setPhase(pod.getStatus().getPhase());
      status.setPodIP(pod.getStatus().getPodIP());
      status.setConditions(pod.getStatus().getConditions());
      List<ContainerStatus> statuses = new ArrayList<>();
      for (ContainerStatus full : orEmpty(pod.getStatus().getContainerStatuses())) {
        ContainerStatus container = new ContainerStatus();
        container.setName(full.getName());
        container.setContainerID(full.getContainerID());
        container.setRestartCount(full.getRestartCount());
        container.setState(full.getState());
        statuses.add(container);
      }
      status.setContainerStatuses(statuses);
      lean.setStatus(status);
    }
    return lean;
  }

  private static <T> List<T> orEmpty(List<T> list) {
    return list == null ? List.of() : list;
  }

  private static ObjectMeta meta(ObjectMeta full) {
    ObjectMeta meta = new ObjectMeta();
    meta.setName(full.getName());
    meta.setNamespace(full.getNamespace());
    meta.setUid(full.getUid());
    meta.setResourceVersion(full.getResourceVersion());
    meta.setLabels(full.getLabels());
    meta.setDeletionTimestamp(full.getDeletionTimestamp());
    Map<String, String> annotations = full.getAnnotations();
    if (annotations != null && !annotations.isEmpty()) {
      Map<String, String> kept = new LinkedHashMap<>();
      annotations.forEach((key, value) -> kept.put(key, GateNames.VERDICTS_ANNOTATION.equals(key) ? value : ""));
      meta.setAnnotations(kept);
    }
    return meta;
  }
}

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
import java.util.function.Function;

/**
 * A pod informer's store that keeps of each pod only what kvguard reads (a copy made before the pod
 * is stored, so the parsed pod is garbage once its event is handled): managedFields, environment
 * variables, volumes, probes, resources, images and most annotations are often 90 % of a pod and
 * kvguard reads none of them.
 *
 * <p>Kept: name, namespace, uid, resourceVersion, labels, deletionTimestamp; the verdict-record
 * annotation, and the keys of the other annotations with empty values (the gate's patch planner
 * writes the whole annotations object only when a pod has none: an emptied map would make it
 * replace annotations the pod has); each container's name and ports, hostNetwork, readinessGates;
 * phase, podIP, conditions (the gate patch replaces its own by index) and each container status's
 * name, containerID, restartCount and state. {@code LeanPodStoreTest} checks that every gate patch
 * and engine-process decision is the same on the lean copy as on the whole pod.
 *
 * <p>Only the pods its {@link PodCacheFilter} keeps are stored so; any other pod of the namespace
 * is held as its key alone (name and resourceVersion, no labels; per-pod cost in
 * docs/benchmarks.md, PodCacheBenchmark). Not nothing, because fabric8's informer cache indexes
 * every pod it is handed by namespace and removes a pod's index entries only when its store held
 * the pod: a pod not stored at all would stay in that index after it is deleted (fabric8 7.5.2,
 * {@code CacheImpl.put/remove}). The key also lets a repeated LIST skip an unchanged pod (same
 * resourceVersion: no event). kvguard's own indexes skip pods held as keys ({@link
 * #indexingKeptPodsOnly}), and {@link PodCache} never hands one out.
 */
final class LeanPodStore extends BasicItemStore<Pod> {
  private final String namespace;
  private final PodCacheFilter filter;

  LeanPodStore(String namespace, PodCacheFilter filter) {
    super(Cache::metaNamespaceKeyFunc);
    this.namespace = namespace;
    this.filter = filter;
  }

  @Override
  public Pod put(String key, Pod pod) {
    return super.put(key, filter.keeps(pod) ? lean(pod) : new KeyOnly(namespace, pod));
  }

  /** A pod this store holds as its key alone: not one to read anything from. */
  static boolean isKeyOnly(Pod pod) {
    return pod instanceof KeyOnly;
  }

  /**
   * Indexes that file only the pods {@code filter} keeps. Consistent on removal: fabric8 removes a
   * pod's entries by applying the index to what the store held, which for a kept pod is its lean
   * copy (the filter reads nothing the lean copy drops, so it keeps that too) and for a key yields
   * nothing, as it did when the whole pod came.
   */
  static Map<String, Function<Pod, List<String>>> indexingKeptPodsOnly(
      PodCacheFilter filter, Map<String, Function<Pod, List<String>>> indexers) {
    Map<String, Function<Pod, List<String>>> kept = new LinkedHashMap<>();
    indexers.forEach(
        (name, index) ->
            kept.put(
                name, pod -> isKeyOnly(pod) || !filter.keeps(pod) ? List.of() : index.apply(pod)));
    return kept;
  }

  /**
   * Name, namespace (the store's own string) and resourceVersion; the metadata is made when asked
   * for (by the cache's key and namespace index functions and event handlers), so that each pod
   * held so costs two strings and this.
   */
  private static final class KeyOnly extends Pod {
    private final String podNamespace;
    private final String name;
    private final String resourceVersion;

    KeyOnly(String namespace, Pod pod) {
      this.podNamespace =
          namespace.equals(pod.getMetadata().getNamespace())
              ? namespace
              : pod.getMetadata().getNamespace();
      this.name = pod.getMetadata().getName();
      this.resourceVersion = pod.getMetadata().getResourceVersion();
    }

    @Override
    public ObjectMeta getMetadata() {
      ObjectMeta meta = new ObjectMeta();
      meta.setNamespace(podNamespace);
      meta.setName(name);
      meta.setResourceVersion(resourceVersion);
      return meta;
    }
  }

  /**
   * The parts of {@code pod} kvguard reads, in new objects (nothing of the original is referenced
   * but strings).
   */
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
      annotations.forEach(
          (key, value) -> kept.put(key, GateNames.VERDICTS_ANNOTATION.equals(key) ? value : ""));
      meta.setAnnotations(kept);
    }
    return meta;
  }
}

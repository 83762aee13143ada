package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.gate.GateNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

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
 * resourceVersion: no event). kvguard's own indexes are kept here ({@link #byIndex}) and file only
 * the pods kept whole, and {@link PodCache} never hands out a pod held as its key.
 */
final class LeanPodStore extends BasicItemStore<Pod> {
  private final String namespace;
  private final PodCacheFilter filter;
  private final Map<String, Function<Pod, List<String>>> indexers;

  /** Index name → index key → the store keys of the pods filed there. */
  private final Map<String, Map<String, Set<String>>> indexes = new HashMap<>();

  LeanPodStore(String namespace, PodCacheFilter filter) {
    this(namespace, filter, SelectionIndex.podIndexers());
  }

  LeanPodStore(
      String namespace, PodCacheFilter filter, Map<String, Function<Pod, List<String>>> indexers) {
    super(Cache::metaNamespaceKeyFunc);
    this.namespace = namespace;
    this.filter = filter;
    this.indexers = Map.copyOf(indexers);
    indexers.keySet().forEach(name -> indexes.put(name, new ConcurrentHashMap<>()));
  }

  @Override
  public Pod put(String key, Pod pod) {
    Pod stored = filter.keeps(pod) ? lean(pod) : new KeyOnly(namespace, pod);
    Pod before = super.put(key, stored);
    reindex(key, before, stored);
    return before;
  }

  @Override
  public Pod remove(String key) {
    Pod before = super.remove(key);
    if (before != null) {
      reindex(key, before, null);
    }
    return before;
  }

  /** A pod this store holds as its key alone: not one to read anything from. */
  static boolean isKeyOnly(Pod pod) {
    return pod instanceof KeyOnly;
  }

  /**
   * The kept pods filed under {@code key} of kvguard's pod index {@code index} ({@link
   * SelectionIndex#podIndexers()}). A pod an update leaves under a key is found under it throughout
   * the update, which fabric8's informer indexes do not promise: fabric8 7.5.2 ({@code
   * CacheImpl.updateIndices}, {@code CacheImpl.Index.update}) takes a pod out of every entry of its
   * old version and then files the new one, and {@code byIndex} does not wait for that, so a pass
   * reading while an unchanged pod was updated found no pod (the policy's first pass saw an empty
   * role and the pod waited a whole probe period; a pod selected by two roles was judged by the
   * second). Here a pod is filed under its new keys before it leaves its old ones. Between the
   * store's write and the index's, a pod may still be found under a key its new version left:
   * callers check each pod against the key ({@link OwnWrites#overIndex}).
   */
  List<Pod> byIndex(String index, String key) {
    Map<String, Set<String>> entries = indexes.get(index);
    Set<String> podKeys = entries == null ? null : entries.get(key);
    if (podKeys == null) {
      return List.of();
    }
    List<Pod> found = new ArrayList<>(podKeys.size());
    for (String podKey : podKeys) {
      Pod pod = get(podKey);
      if (pod != null && !isKeyOnly(pod)) {
        found.add(pod);
      }
    }
    return found;
  }

  /** The store keys filed under {@code key} of {@code index} (an entry left behind shows here). */
  Set<String> filed(String index, String key) {
    return Set.copyOf(indexes.get(index).getOrDefault(key, Set.of()));
  }

  /**
   * This store's own copy of {@code pod}, when it keeps it whole. Never JOSDK's temporary cache's
   * (the informer's {@code get} answers from that first): only the store tells whether the watch
   * has brought a write back yet.
   */
  Optional<Pod> kept(ResourceID pod) {
    Pod stored = get(Cache.namespaceKeyFunc(pod.getNamespace().orElse(namespace), pod.getName()));
    return stored == null || isKeyOnly(stored) ? Optional.empty() : Optional.of(stored);
  }

  /** Every pod this store keeps whole (not those held as their key alone). */
  Stream<Pod> kept() {
    return values().filter(pod -> !isKeyOnly(pod));
  }

  /**
   * Called under fabric8's cache lock (its {@code put} and {@code remove} are synchronized), and
   * synchronized here too so that writers never interleave whatever calls them.
   */
  private synchronized void reindex(String podKey, Pod before, Pod after) {
    for (Map.Entry<String, Function<Pod, List<String>>> indexer : indexers.entrySet()) {
      Map<String, Set<String>> entries = indexes.get(indexer.getKey());
      List<String> was = keysOf(indexer.getValue(), before);
      // A set: a tenant's pod may carry tens of thousands of labels or verdict records, and a
      // list's contains made each update cost their square under the cache's lock (3 s for 40,000
      // labels, LeanPodStoreIndexCostTest).
      Set<String> now = new HashSet<>(keysOf(indexer.getValue(), after));
      for (String key : now) {
        entries.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(podKey);
      }
      for (String key : was) {
        if (!now.contains(key)) {
          entries.computeIfPresent(
              key,
              (k, pods) -> {
                pods.remove(podKey);
                return pods.isEmpty() ? null : pods;
              });
        }
      }
    }
  }

  private static List<String> keysOf(Function<Pod, List<String>> indexer, Pod pod) {
    return pod == null || isKeyOnly(pod) ? List.of() : indexer.apply(pod);
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

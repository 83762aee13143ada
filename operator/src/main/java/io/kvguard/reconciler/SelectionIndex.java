package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.VerdictRecords;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Informer-cache indexes that answer "which pods does this role select" and "which policies concern
 * this pod" without scanning the namespace. Both questions are asked for every pod in every pass
 * and on every pod event; as scans they cost O(pods × policies) per pass (O(N²) per period across a
 * cluster: at 1,000 pods a fifth of the operator's start-up CPU). The indexes only narrow the
 * candidates: every candidate is still checked with the full selector, so a selector the index
 * cannot use (matchExpressions only) falls back to the scan.
 */
final class SelectionIndex {
  /** Pods by each of their labels: {@code namespace/key=value}. */
  static final String POD_LABEL = "kvguard-pod-label";

  /**
   * Policies by one matchLabels pair of each role ({@code namespace/key=value}), or {@code
   * namespace/*}.
   */
  static final String POLICY_SELECTS = "kvguard-policy-selects";

  /** Policies by each pod their status lists: {@code namespace/podName}. */
  static final String POLICY_LISTS = "kvguard-policy-lists";

  /** Pods by each policy whose verdict record they carry: {@code namespace/policyName}. */
  static final String POD_RECORDED_BY = "kvguard-pod-recorded-by";

  private SelectionIndex() {}

  /**
   * What the pod indexes are read through: a namespace's pods under an index key, or all of them
   * (PodCache).
   */
  interface Pods {
    List<Pod> byIndex(String namespace, String index, String key);

    java.util.stream.Stream<Pod> list(String namespace);
  }

  static List<String> podKeys(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels == null || labels.isEmpty()) {
      return List.of();
    }
    String namespace = pod.getMetadata().getNamespace();
    List<String> keys = new ArrayList<>(labels.size());
    labels.forEach((key, value) -> keys.add(labelKey(namespace, key, value)));
    return keys;
  }

  /**
   * One key per role: a pod the role selects carries every matchLabels pair, so it carries the
   * first one (by key order) and is found under it. A role without matchLabels is filed under
   * {@code namespace/*}.
   */
  static List<String> policySelectKeys(ModelDeployment md) {
    if (md.getSpec() == null || md.getSpec().getRoles() == null) {
      return List.of();
    }
    String namespace = md.getMetadata().getNamespace();
    List<String> keys = new ArrayList<>();
    for (RoleSpec role : md.getSpec().getRoles()) {
      String key =
          firstMatchLabel(role.getSelector())
              .map(pair -> labelKey(namespace, pair.getKey(), pair.getValue()))
              .orElse(namespace + "/*");
      if (!keys.contains(key)) {
        keys.add(key);
      }
    }
    return keys;
  }

  static List<String> policyListKeys(ModelDeployment md) {
    if (md.getStatus() == null || md.getStatus().pods == null) {
      return List.of();
    }
    String namespace = md.getMetadata().getNamespace();
    return md.getStatus().pods.stream()
        .filter(p -> p.name != null)
        .map(p -> namespace + "/" + p.name)
        .distinct()
        .toList();
  }

  static List<String> recordKeys(Pod pod) {
    String namespace = pod.getMetadata().getNamespace();
    return VerdictRecords.of(pod).keySet().stream()
        .map(policy -> namespace + "/" + policy)
        .toList();
  }

  /** The pod indexes, added to each namespace's pod informer before it starts. */
  static Map<String, Function<Pod, List<String>>> podIndexers() {
    return Map.of(POD_LABEL, SelectionIndex::podKeys, POD_RECORDED_BY, SelectionIndex::recordKeys);
  }

  static void register(IndexerResourceCache<ModelDeployment> policies) {
    policies.addIndexers(
        Map.of(
            POLICY_SELECTS,
            SelectionIndex::policySelectKeys,
            POLICY_LISTS,
            SelectionIndex::policyListKeys));
  }

  /** The pods of {@code namespace} that {@code selector} matches, by name. */
  static List<Pod> selected(Pods pods, String namespace, LabelSelector selector) {
    var candidates =
        firstMatchLabel(selector)
            .map(
                pair ->
                    pods
                        .byIndex(
                            namespace,
                            POD_LABEL,
                            labelKey(namespace, pair.getKey(), pair.getValue()))
                        .stream())
            .orElseGet(() -> pods.list(namespace));
    return candidates
        .filter(pod -> LabelSelectors.matches(selector, pod.getMetadata().getLabels()))
        .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
        .toList();
  }

  /** The pods that carry a verdict record of this policy, whether or not it selects them now. */
  static List<Pod> recordedBy(Pods pods, ModelDeployment md) {
    String namespace = md.getMetadata().getNamespace();
    return pods.byIndex(namespace, POD_RECORDED_BY, namespace + "/" + md.getMetadata().getName());
  }

  /**
   * Policies of the pod's namespace that might select it, list it or have recorded a verdict on it:
   * a superset the caller filters exactly.
   *
   * <p>The policies' indexes are fabric8's (the controller's informer), which re-file a policy on
   * each update by taking it out of its entries first (fabric8 7.5.2 {@code
   * CacheImpl.updateIndices}): a lookup while a policy's status is written may miss it. When the
   * indexes find none for a pod the namespace's pod cache keeps ({@code kept}: a selector there
   * selects it, or it carries kvguard's marks), the namespace's policies are read whole, so such a
   * pod is never judged to concern no policy on an index's word alone (a probe would be dropped, a
   * pod's event mapped nowhere). Other pods (a batch job's) concern no policy and cost no read.
   * Pods keep their own indexes ({@link LeanPodStore#byIndex}).
   */
  static List<ModelDeployment> candidatePolicies(
      IndexerResourceCache<ModelDeployment> policies, Pod pod, boolean kept) {
    String namespace = pod.getMetadata().getNamespace();
    Map<ResourceID, ModelDeployment> found = new LinkedHashMap<>();
    List<String> keys = new ArrayList<>(podKeys(pod));
    keys.add(namespace + "/*");
    for (String key : keys) {
      policies
          .byIndex(POLICY_SELECTS, key)
          .forEach(md -> found.putIfAbsent(ResourceID.fromResource(md), md));
    }
    policies
        .byIndex(POLICY_LISTS, namespace + "/" + pod.getMetadata().getName())
        .forEach(md -> found.putIfAbsent(ResourceID.fromResource(md), md));
    for (String recorded : VerdictRecords.of(pod).keySet()) {
      policies
          .get(new ResourceID(recorded, namespace))
          .ifPresent(md -> found.putIfAbsent(ResourceID.fromResource(md), md));
    }
    if (found.isEmpty() && kept) {
      policies.list(namespace).forEach(md -> found.put(ResourceID.fromResource(md), md));
    }
    List<ModelDeployment> byName = new ArrayList<>(found.values());
    byName.sort(Comparator.comparing((HasMetadata md) -> md.getMetadata().getName()));
    return byName;
  }

  private static Optional<Map.Entry<String, String>> firstMatchLabel(LabelSelector selector) {
    if (selector == null
        || selector.getMatchLabels() == null
        || selector.getMatchLabels().isEmpty()) {
      return Optional.empty();
    }
    Map.Entry<String, String> first = new TreeMap<>(selector.getMatchLabels()).firstEntry();
    return first.getValue() == null ? Optional.empty() : Optional.of(first);
  }

  private static String labelKey(String namespace, String key, String value) {
    return namespace + "/" + key + "=" + value;
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;

/**
 * The pod informer's cache, without the parts of a pod kvguard never reads: managedFields (often the largest
 * part of a pod) and kubectl's last-applied annotation. At thousands of pods this is most of the cache.
 */
final class LeanPodStore extends BasicItemStore<Pod> {
  private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  LeanPodStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public Pod put(String key, Pod pod) {
    pod.getMetadata().setManagedFields(null);
    if (pod.getMetadata().getAnnotations() != null) {
      pod.getMetadata().getAnnotations().remove(LAST_APPLIED);
    }
    return super.put(key, pod);
  }
}

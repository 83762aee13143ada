package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import io.kvguard.gate.GateNames;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a tenant's pod costs the namespace's informer on each update, with labels and verdict
 * records a tenant is free to write: the API server bounds a pod's labels only by the object's size
 * (about 1.5 MiB in etcd, some 100,000 short labels) and its annotations by 256 KiB (some 30,000
 * verdict-record keys). Each update is filed under the cache's lock, so every event of the
 * namespace waits for it: the cost must grow with the keys, not with their square.
 */
class LeanPodStoreIndexCostTest {
  private static final String NS = "tenant";
  private static final int KEYS = 80_000;
  private static final int RECORDS = 25_000;
  private static final PodCacheFilter FILTER =
      new PodCacheFilter(
          Set.of(new LabelSelectorBuilder().withMatchLabels(Map.of("app", "glm")).build()));

  private static Pod pod(long resourceVersion, Map<String, String> labels, String records) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName("noisy-0")
        .withUid("uid-noisy-0")
        .withResourceVersion(Long.toString(resourceVersion))
        .withLabels(labels)
        .withAnnotations(
            records == null ? Map.of() : Map.of(GateNames.VERDICTS_ANNOTATION, records))
        .endMetadata()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
  }

  private static long millisToUpdate(CacheImpl<Pod> cache, Pod pod) {
    long start = System.nanoTime();
    cache.put(pod);
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  @Test
  void anUpdateOfAPodWithTensOfThousandsOfLabelsCostsTimeLinearInThem() {
    Map<String, String> labels = new HashMap<>();
    labels.put("app", "glm");
    for (int i = 0; i < KEYS; i++) {
      labels.put("l" + i, "");
    }
    CacheImpl<Pod> cache = new CacheImpl<>();
    LeanPodStore store = new LeanPodStore(NS, FILTER);
    cache.setItemStore(store);
    cache.put(pod(1, labels, null));

    // Status changes: the labels are the same, every one of them stays filed. The second is timed
    // (the first warms the code up).
    millisToUpdate(cache, pod(2, labels, null));
    long millis = millisToUpdate(cache, pod(3, labels, null));

    assertThat(store.byIndex(SelectionIndex.POD_LABEL, NS + "/app=glm")).hasSize(1);
    assertThat(store.byIndex(SelectionIndex.POD_LABEL, NS + "/l" + (KEYS - 1) + "=")).hasSize(1);
    // Linear: about 25 ms here. Their square (a list's contains per key) took 13 s; the bound
    // leaves a slow CI machine two orders of magnitude.
    assertThat(millis).as("ms to file one update of a pod with %d labels", KEYS).isLessThan(2_000);
  }

  @Test
  void anUpdateOfAPodWithTensOfThousandsOfVerdictRecordsKeepsEachFiled() {
    // 25,000 records in 255 KiB: within the API server's 256 KiB for all of a pod's annotations.
    StringBuilder records = new StringBuilder("{");
    for (int i = 0; i < RECORDS; i++) {
      records.append(i == 0 ? "" : ",").append('"').append(Integer.toString(i, 36)).append("\":{}");
    }
    String json = records.append('}').toString();
    assertThat(json.length()).isLessThan(256 * 1024);
    CacheImpl<Pod> cache = new CacheImpl<>();
    LeanPodStore store = new LeanPodStore(NS, FILTER);
    cache.setItemStore(store);
    cache.put(pod(1, Map.of("app", "glm"), json));

    // Not timed: reading the records (a parse of 255 KiB) is most of such an update's cost.
    cache.put(pod(2, Map.of("app", "glm"), json));

    assertThat(
            store.byIndex(
                SelectionIndex.POD_RECORDED_BY, NS + "/" + Integer.toString(RECORDS - 1, 36)))
        .hasSize(1);
    assertThat(store.byIndex(SelectionIndex.POD_RECORDED_BY, NS + "/0")).hasSize(1);
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A pass selects a role's pods by label from the namespace's pod cache while the informer updates
 * those pods (every status change of a busy pod, every gate write coming back). A pod whose labels
 * did not change must be found under them at every moment: a pass that misses it judges a policy's
 * role empty (its first pass then waits a whole probe period before probing the pod) or judges a
 * pod selected by two roles as the second one (another engine, port and credentials).
 */
class PodIndexUnderUpdatesTest {
  private static final String NS = "inference";
  private static final Map<String, String> LABELS = Map.of("app", "glm", "role", "serve");
  private static final PodCacheFilter FILTER =
      new PodCacheFilter(Set.of(new LabelSelectorBuilder().withMatchLabels(LABELS).build()));
  private static final String KEY = NS + "/app=glm";

  private static Pod version(long resourceVersion) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName("serve-0")
        .withUid("uid-serve-0")
        .withResourceVersion(Long.toString(resourceVersion))
        .withLabels(LABELS)
        .endMetadata()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
  }

  @Test
  void aPodUpdatedWithItsLabelsUnchangedIsFoundUnderThemByEveryLookup() throws Exception {
    CacheImpl<Pod> cache = new CacheImpl<>();
    LeanPodStore store = new LeanPodStore(NS, FILTER);
    cache.setItemStore(store);
    cache.put(version(1));

    AtomicBoolean updating = new AtomicBoolean(true);
    CompletableFuture<Void> informer =
        CompletableFuture.runAsync(
            () -> {
              long resourceVersion = 2;
              long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700);
              while (System.nanoTime() < until) {
                cache.put(version(resourceVersion++));
              }
              updating.set(false);
            });
    AtomicLong lookups = new AtomicLong();
    AtomicLong misses = new AtomicLong();
    while (updating.get()) {
      lookups.incrementAndGet();
      if (store.byIndex(SelectionIndex.POD_LABEL, KEY).isEmpty()) {
        misses.incrementAndGet();
      }
    }
    informer.get(5, TimeUnit.SECONDS);

    assertThat(lookups.get()).as("lookups made during the updates").isGreaterThan(1_000);
    assertThat(misses.get()).as("lookups that found no pod").isZero();
    assertThat(store.byIndex(SelectionIndex.POD_LABEL, KEY)).hasSize(1);
  }
}

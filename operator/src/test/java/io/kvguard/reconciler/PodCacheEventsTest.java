package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import io.fabric8.kubernetes.client.informers.impl.cache.ProcessorStore;
import io.fabric8.kubernetes.client.informers.impl.cache.SharedProcessor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Which pods added to a namespace after its first LIST trigger passes. Checked through fabric8's
 * own ProcessorStore (7.5.2), which hands the add handler the pod as the watch brought it, not what
 * the {@link LeanPodStore} stored: asking the handed pod whether it was stored as a key alone says
 * no for every pod, so a batch job beside the engines would reach the policies' mapper.
 */
class PodCacheEventsTest {
  private static final String NS = "inference";
  private static final PodCacheFilter FILTER =
      new PodCacheFilter(
          Set.of(new LabelSelectorBuilder().withMatchLabels(Map.of("role", "serve")).build()));

  private static Pod pod(String name, String role) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName(name)
        .withResourceVersion("1")
        .withLabels(Map.of("role", role))
        .endMetadata()
        .build();
  }

  @Test
  void aPodAddedAfterTheFirstListThatNoPolicySelectsTriggersNoPassAndASelectedOneDoes() {
    CacheImpl<Pod> cache = new CacheImpl<>();
    cache.setItemStore(new LeanPodStore(NS, FILTER));
    SharedProcessor<Pod> processor = new SharedProcessor<>(Runnable::run, "pods-" + NS);
    List<String> triggering = new CopyOnWriteArrayList<>();
    processor.addProcessorListener(
        new ResourceEventHandler<Pod>() {
          @Override
          public void onAdd(Pod pod) {
            if (PodCache.addTriggersPass(FILTER, pod)) {
              triggering.add(pod.getMetadata().getName());
            }
          }

          @Override
          public void onUpdate(Pod oldPod, Pod newPod) {}

          @Override
          public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {}
        },
        0,
        cache::list);
    ProcessorStore<Pod> store = new ProcessorStore<>(cache, processor);
    store.retainAll(Set.of(), null); // the first LIST, of an empty namespace, is done

    store.add(pod("batch-1", "batch"));
    store.add(pod("engine-1", "serve"));

    assertThat(LeanPodStore.isKeyOnly(cache.getByKey(NS + "/batch-1")))
        .as("the batch job is held as its key")
        .isTrue();
    assertThat(triggering).containsExactly("engine-1");
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The add events of a namespace's first LIST trigger no passes, even when fabric8 hands them out
 * after the informer reported it had listed (ScaleBenchmarkIT saw those late events repeat passes
 * that then wrote against a stale pod): they are told apart by what the LIST brought.
 */
class PodCacheFirstListTest {
  private static Pod pod(String name, String resourceVersion) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .build();
  }

  @Test
  void nothingAddedTriggersAPassBeforeTheFirstListIsDone() {
    assertThat(PodCache.afterFirstList(null, pod("engine-0", "7"))).isFalse();
  }

  @Test
  void aLatePodOfTheFirstListTriggersNoPassButANewPodOrANewVersionDoes() {
    Set<String> firstList = Set.of("engine-0@7", "engine-1@9");
    assertThat(PodCache.afterFirstList(firstList, pod("engine-0", "7"))).isFalse();
    assertThat(PodCache.afterFirstList(firstList, pod("engine-2", "12"))).isTrue();
    // Deleted and created again under the same name after the LIST: a new pod.
    assertThat(PodCache.afterFirstList(firstList, pod("engine-1", "15"))).isTrue();
  }
}

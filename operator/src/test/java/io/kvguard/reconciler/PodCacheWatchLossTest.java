package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * What the 5 s sampler ({@link PodCache#sampleWatches}) asks of the passes once a namespace's pod
 * watch has been down longer than {@link WatchLoss#BOUND}: a pass of every policy of that
 * namespace, so that each shuts its gates then, not at its own next period.
 */
class PodCacheWatchLossTest {
  private static final Instant T0 = Instant.parse("2026-12-07T16:00:00Z");
  private static final PodCacheFilter FILTER =
      new PodCacheFilter(
          Set.of(new LabelSelectorBuilder().withMatchLabels(Map.of("app", "a")).build()));

  private final PodCache pods = new PodCache(pod -> Set.of(), 1);

  private static Instant at(int seconds) {
    return T0.plusSeconds(seconds);
  }

  private static PodCache.Informer informer(String namespace, BooleanSupplier watching) {
    return new PodCache.Informer() {
      @Override
      public String name() {
        return PodCache.SOURCE_PREFIX + namespace;
      }

      @Override
      public Optional<Pod> get(ResourceID pod) {
        return Optional.empty();
      }

      @Override
      public void handleRecentResourceUpdate(ResourceID pod, Pod written, Pod base) {}

      @Override
      public boolean watching() {
        return watching.getAsBoolean();
      }
    };
  }

  private void cache(String namespace, BooleanSupplier watching) {
    pods.cached(
        namespace, informer(namespace, watching), new LeanPodStore(namespace, FILTER), FILTER);
  }

  @Test
  void aPassThatSeesTheLossFirstStillLeavesTheSamplerToAskForThePassesOfTheOtherPolicies() {
    // Policy A's pass (its probe period) lands between the bound and the sampler's next tick:
    // it shuts A's gates. Policy B of the same namespace has had no pass since; its gates stay
    // open on the stale cache until the sampler asks for its pass.
    cache("inference", () -> false);
    assertThat(pods.sampleWatches(at(0))).isEmpty();
    assertThat(pods.watchLost("inference", at(61))).contains(at(0));
    assertThat(pods.sampleWatches(at(62))).containsExactly("inference");
    // Once per bound while the loss lasts: each of those passes lists the namespace anew first,
    // and JOSDK stops retrying one that fails after five tries.
    assertThat(pods.sampleWatches(at(67))).isEmpty();
    assertThat(pods.watchLost("inference", at(68))).contains(at(0));
    assertThat(pods.sampleWatches(at(121))).isEmpty();
    assertThat(pods.sampleWatches(at(123))).containsExactly("inference");
  }

  @Test
  void anInformerThatThrowsWhenAskedDoesNotCostTheOtherNamespacesTheirSample() {
    // fabric8 v7.5.2 Reflector.isWatching reads `watching && Optional.of(watchFuture)`, and
    // Reflector.stopWatcher sets watchFuture to null before its watch's close sets watching to
    // false: an informer being stopped (a namespace dropped, or listed again and replaced) can
    // throw a NullPointerException to a sample taken meanwhile.
    for (String namespace : Set.of("a", "b", "c", "d", "e", "f")) {
      cache(namespace, () -> false);
    }
    cache(
        "stopping",
        () -> {
          throw new NullPointerException("Reflector.isWatching: watchFuture is null");
        });
    Set<String> first = Set.of();
    try {
      first = pods.sampleWatches(at(0));
    } catch (RuntimeException e) {
      // Asserted below: no namespace loses its sample, nor its call for passes.
    }
    assertThat(first).isEmpty();
    Set<String> lost = Set.of();
    try {
      lost = pods.sampleWatches(at(61));
    } catch (RuntimeException e) {
      // A namespace announced before the throw in this same sample has spent its one call.
    }
    assertThat(lost).containsExactlyInAnyOrder("a", "b", "c", "d", "e", "f");
  }
}

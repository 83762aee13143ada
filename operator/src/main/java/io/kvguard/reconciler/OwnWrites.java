package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The pods kvguard wrote, held until the informer's store shows them: a pass reads its own writes
 * even while their watch events are on their way.
 *
 * <p>Passes select pods from the informer's store (its indexes), which JOSDK's temporary cache does
 * not cover, and that cache drops a written pod at the first watch event of the pod, even an older
 * one (JOSDK 5.2.3 {@code TemporaryResourceCache.onEvent}: resource versions are compared only when
 * parsed as numbers, which Kubernetes says never to do). So a pass that followed another within the
 * watch's delay (a probe finishing triggers one) read a pod without the condition and label the
 * pass before it wrote, planned the same writes again, and had them refused: under load one
 * start-up write in a hundred (ScaleBenchmarkIT). Resource versions here are only compared for
 * equality: a store version this process wrote over (the version a write was planned on, or one of
 * its own earlier writes) is behind its last write; any other version is newer (someone else wrote
 * the pod after it) and wins.
 */
final class OwnWrites {
  /** Long after any watch event is due: a pod deleted meanwhile is never read again. */
  static final Duration KEPT = Duration.ofMinutes(2);

  private record Written(Pod pod, Set<String> behind, long atNanos) {}

  private final ConcurrentMap<ResourceID, Written> byPod = new ConcurrentHashMap<>();
  private final LongSupplier nanos;
  private volatile long sweptAt;

  OwnWrites() {
    this(System::nanoTime);
  }

  OwnWrites(LongSupplier nanos) {
    this.nanos = nanos;
    this.sweptAt = nanos.getAsLong();
  }

  /** An accepted write: {@code written} replaced {@code base}, the version it was planned on. */
  void written(Pod written, Pod base) {
    written(written, base, base);
  }

  /**
   * As above; {@code read}: the version the pass read the pod at, older than {@code base} when the
   * write's resourceVersion test failed and PodGate read the pod again. The store may still show
   * {@code read} (it lags the API server, which is why the test failed): that version is behind the
   * write too, not a newer one to forget it for.
   */
  void written(Pod written, Pod base, Pod read) {
    long now = nanos.getAsLong();
    byPod.compute(
        ResourceID.fromResource(written),
        (id, last) -> {
          Set<String> behind = new HashSet<>();
          if (last != null && sameUid(last.pod(), written)) {
            behind.addAll(last.behind());
            behind.add(version(last.pod()));
          }
          if (base != null && sameUid(base, written)) {
            behind.add(version(base));
          }
          if (read != null && sameUid(read, written)) {
            behind.add(version(read));
          }
          return new Written(written, Set.copyOf(behind), now);
        });
    sweep(now);
  }

  /**
   * The pod as this process last knows it: its own later write when {@code read} is a version it
   * wrote over, else {@code read}. {@code fromStore}: {@code read} is the informer's store (not
   * JOSDK's temporary cache), so once it shows the last write the write is forgotten.
   */
  Pod current(Pod read, boolean fromStore) {
    ResourceID id = ResourceID.fromResource(read);
    Written last = byPod.get(id);
    if (last == null) {
      return read;
    }
    if (nanos.getAsLong() - last.atNanos() > KEPT.toNanos()) {
      byPod.remove(id, last);
      return read;
    }
    if (sameUid(last.pod(), read) && last.behind().contains(version(read))) {
      return last.pod();
    }
    if (fromStore || !sameUid(last.pod(), read) || !version(last.pod()).equals(version(read))) {
      byPod.remove(id, last);
    }
    return read;
  }

  /**
   * The pods of {@code namespace} this process wrote and the store may not show yet (a verdict
   * record it added is not in the store's index until the watch brings it).
   */
  /**
   * What an index lookup finds once this process's writes are read over the store: {@code indexed}
   * (the store's pods under {@code key}) as last written, less those a write moved off {@code key},
   * plus written pods the store has not indexed under it yet. {@code stored}: the store's own copy
   * of a pod (never JOSDK's temporary cache's: a write read from there counts as shown by the store
   * and is forgotten before the store shows it); {@code keys}: the index's function.
   *
   * <p>A write the store already shows is forgotten here, not kept until {@link #KEPT}: every pass
   * looks up its policy's pods twice, so a write kept after the store caught up cost each of them a
   * call of {@code keys} (a verdict record's parse) per pod written in the last two minutes, a
   * quarter more CPU in the passes of a 1,000-pod start-up (docs/benchmarks.md, "Start-up").
   */
  List<Pod> overIndex(
      String namespace,
      String key,
      List<Pod> indexed,
      Function<ResourceID, Optional<Pod>> stored,
      Function<Pod, List<String>> keys) {
    Map<ResourceID, Pod> found = new LinkedHashMap<>();
    for (Pod pod : indexed) {
      Pod current = current(pod, true);
      if (keys.apply(current).contains(key)) {
        found.put(ResourceID.fromResource(current), current);
      }
    }
    for (ResourceID id : written(namespace)) {
      if (found.containsKey(id)) {
        continue;
      }
      Optional<Pod> inStore = stored.apply(id);
      if (inStore.isEmpty()) {
        continue;
      }
      Pod current = current(inStore.get(), true);
      // Weighed against the key even when the store shows the write (which is forgotten now): its
      // watch event may have landed after the index was read above and before this read, and the
      // pod is under the key both before and after. One key call per write, once: a forgotten
      // write is not read here again.
      if (keys.apply(current).contains(key)) {
        found.put(id, current);
      }
    }
    return List.copyOf(found.values());
  }

  List<ResourceID> written(String namespace) {
    return byPod.keySet().stream()
        .filter(id -> id.getNamespace().filter(namespace::equals).isPresent())
        .toList();
  }

  /** How many writes are held (for tests). */
  int size() {
    return byPod.size();
  }

  private void sweep(long now) {
    if (now - sweptAt < KEPT.toNanos()) {
      return;
    }
    sweptAt = now;
    byPod.values().removeIf(w -> now - w.atNanos() > KEPT.toNanos());
  }

  private static boolean sameUid(Pod a, Pod b) {
    return Objects.equals(a.getMetadata().getUid(), b.getMetadata().getUid());
  }

  private static String version(Pod pod) {
    return String.valueOf(pod.getMetadata().getResourceVersion());
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A pass reads the pods this process wrote even while the informer's store still shows an older
 * version: the one a write was planned on, or an earlier write of its own whose watch event came
 * first (ScaleBenchmarkIT under load: a second pass planned the first pass's writes again and had
 * them refused). Versions are compared for equality only.
 */
class OwnWritesTest {
  private final AtomicLong clock = new AtomicLong();
  private final OwnWrites writes = new OwnWrites(clock::get);

  private static Pod pod(String uid, String resourceVersion) {
    return pod("engine-0", uid, resourceVersion);
  }

  private static Pod pod(String name, String uid, String resourceVersion) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace("inference")
        .withName(name)
        .withUid(uid)
        .withResourceVersion(resourceVersion)
        .endMetadata()
        .build();
  }

  @Test
  void aStoreVersionItWroteOverReadsAsItsLastWrite() {
    Pod listed = pod("u1", "100");
    Pod condition = pod("u1", "101");
    Pod label = pod("u1", "102");
    writes.written(condition, listed);
    writes.written(label, condition);

    // Neither write's event has come: the store still holds the listed pod.
    assertThat(writes.current(listed, true)).isSameAs(label);
    // The condition write's event came, the label write's not yet (JOSDK's temporary cache drops
    // the label write at that event).
    assertThat(writes.current(condition, true)).isSameAs(label);
    // The store caught up: it is read as it is, and the write is forgotten.
    assertThat(writes.current(label, true)).isSameAs(label);
    assertThat(writes.size()).isZero();
    assertThat(writes.current(listed, true)).isSameAs(listed);
  }

  @Test
  void aVersionItDidNotWriteOverIsNewerAndWins() {
    Pod listed = pod("u1", "100");
    writes.written(pod("u1", "101"), listed);

    Pod kubelet = pod("u1", "105");
    assertThat(writes.current(kubelet, true)).isSameAs(kubelet);
    assertThat(writes.size()).isZero();
  }

  @Test
  void aWritePlannedOnAReReadPodCountsTheReReadVersionAsBehind() {
    // The first write was refused; the pod was read again (103) and the write planned on that.
    Pod reread = pod("u1", "103");
    Pod written = pod("u1", "104");
    writes.written(written, reread);

    assertThat(writes.current(reread, true)).isSameAs(written);
    // Older than the re-read version and never written over by this process: not known as behind,
    // so the store is read as it is (a write planned on it is refused and re-read, as before).
    Pod older = pod("u1", "100");
    assertThat(writes.current(older, true)).isSameAs(older);
  }

  @Test
  void aPodRecreatedUnderTheSameNameIsNeverReadAsTheOldOnesWrite() {
    Pod listed = pod("u1", "100");
    writes.written(pod("u1", "101"), listed);

    Pod recreated = pod("u2", "100");
    assertThat(writes.current(recreated, true)).isSameAs(recreated);
    assertThat(writes.size()).isZero();
  }

  @Test
  void theTemporaryCacheShowingTheLastWriteKeepsItUntilTheStoreDoes() {
    Pod listed = pod("u1", "100");
    Pod condition = pod("u1", "101");
    writes.written(condition, listed);

    Pod fromTemporaryCache = pod("u1", "101");
    assertThat(writes.current(fromTemporaryCache, false)).isSameAs(fromTemporaryCache);
    assertThat(writes.size()).isOne();
    assertThat(writes.current(listed, true)).isSameAs(condition);
  }

  @Test
  void aWriteWhoseEventNeverCameIsForgottenAfterAWhile() {
    Pod listed = pod("u1", "100");
    writes.written(pod("u1", "101"), listed);

    clock.addAndGet(OwnWrites.KEPT.toNanos() + 1);
    assertThat(writes.current(listed, true)).isSameAs(listed);
    assertThat(writes.size()).isZero();

    // Deleted pods are never read again: the next write sweeps what is that old.
    writes.written(pod("u1", "201"), pod("u1", "200"));
    writes.written(pod("engine-9", "u9", "8"), pod("engine-9", "u9", "7"));
    assertThat(writes.size()).isEqualTo(2);
    clock.addAndGet(OwnWrites.KEPT.toNanos() + 1);
    writes.written(pod("engine-9", "u9", "9"), pod("engine-9", "u9", "8"));
    assertThat(writes.size()).isOne();
  }

  @Test
  void itNamesThePodsItWroteInANamespaceUntilTheStoreShowsThem() {
    Pod listed = pod("u1", "100");
    Pod written = pod("u1", "101");
    writes.written(written, listed);
    Pod elsewhere = pod("u7", "3");
    elsewhere.getMetadata().setNamespace("batch");
    Pod writtenElsewhere = pod("u7", "4");
    writtenElsewhere.getMetadata().setNamespace("batch");
    writes.written(writtenElsewhere, elsewhere);

    assertThat(writes.written("inference")).containsExactly(ResourceID.fromResource(written));
    writes.current(written, true);
    assertThat(writes.written("inference")).isEmpty();
  }

  private static Pod labelled(String name, String uid, String version, String app) {
    Pod pod = pod(name, uid, version);
    pod.getMetadata().setLabels(Map.of("app", app));
    return pod;
  }

  @Test
  void anIndexLookupReadsItsWritesOverTheStoreAndForgetsThoseTheStoreShows() {
    Map<ResourceID, Pod> store = new HashMap<>();
    AtomicInteger keyCalls = new AtomicInteger();
    Function<Pod, List<String>> keys =
        pod -> {
          keyCalls.incrementAndGet();
          return List.of(pod.getMetadata().getLabels().get("app"));
        };
    Function<ResourceID, Optional<Pod>> stored = id -> Optional.ofNullable(store.get(id));
    // 1,000 pods listed under app=a; the operator relabels each to app=b.
    for (int i = 0; i < 1000; i++) {
      Pod listed = labelled("engine-" + i, "u" + i, "1", "a");
      store.put(ResourceID.fromResource(listed), listed);
      writes.written(labelled("engine-" + i, "u" + i, "2", "b"), listed);
    }
    List<Pod> underA = store.values().stream().toList();

    // Before the watch events: the store's index still files them under a, the writes under b.
    assertThat(writes.overIndex("inference", "a", underA, stored, keys)).isEmpty();
    assertThat(writes.overIndex("inference", "b", List.of(), stored, keys)).hasSize(1000);
    assertThat(writes.size()).isEqualTo(1000);

    // The store caught up.
    for (int i = 0; i < 1000; i++) {
      Pod shown = labelled("engine-" + i, "u" + i, "2", "b");
      store.put(ResourceID.fromResource(shown), shown);
    }
    // A lookup under another policy's key (none of these pods is under it) forgets the writes the
    // store shows, at one key call each (the store's copy is weighed against the key once, in case
    // its event landed during the lookup); the lookups after it cost no key call per pod written.
    keyCalls.set(0);
    assertThat(writes.overIndex("inference", "c", List.of(), stored, keys)).isEmpty();
    assertThat(keyCalls).hasValue(1000);
    assertThat(writes.size()).isZero();
    keyCalls.set(0);
    assertThat(writes.overIndex("inference", "c", List.of(), stored, keys)).isEmpty();
    assertThat(keyCalls).hasValue(0);
    List<Pod> underB = store.values().stream().toList();
    assertThat(writes.overIndex("inference", "b", underB, stored, keys)).hasSize(1000);
    assertThat(keyCalls).hasValue(1000);
  }
}

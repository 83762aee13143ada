package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.gate.GateNames;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A pass reads the writes passes before it had accepted, whatever lookups other passes of the
 * namespace made meanwhile and in whichever order the writes' watch events come back.
 * ScaleBenchmarkIT (ten policies in one namespace) once saw a pod's label written, and 215 ms later
 * a pass plan the same label write on the pod as its condition write left it, refused with 422: a
 * lookup by another policy had read the label write out of JOSDK's temporary cache, taken it for
 * the store's copy and forgotten it, so once the condition write's event reached the store no pass
 * knew of the label any more.
 *
 * <p>The store and JOSDK's temporary cache are driven here in that order, by hand.
 */
class PodCacheOwnWritesTest {
  private static final String NS = "inference";
  private static final PodCacheFilter FILTER =
      new PodCacheFilter(
          Set.of(
              new LabelSelectorBuilder().withMatchLabels(Map.of("app", "a")).build(),
              new LabelSelectorBuilder().withMatchLabels(Map.of("app", "b")).build()));

  private final LeanPodStore store = new LeanPodStore(NS, FILTER);
  private final JosdkInformer informer = new JosdkInformer(store);
  private final PodCache pods = new PodCache(pod -> Set.of(), 1);

  /**
   * What kvguard reads of a namespace's informer, as JOSDK 5.2.3 answers it
   * (operator-framework/java-operator-sdk v5.2.3, {@code ManagedInformerEventSource.get}, {@code
   * TemporaryResourceCache.putResource/onEvent}): {@code get} answers from the temporary cache
   * before the store; a write is held there when the informer's copy is the version it replaced;
   * any watch event of the pod drops it (resource versions are not parsed: {@code
   * parseResourceVersionsForEventFilteringAndCaching} is false by default and in kvguard).
   */
  private static final class JosdkInformer implements PodCache.Informer {
    private final LeanPodStore store;
    private final Map<ResourceID, Pod> temporary = new ConcurrentHashMap<>();

    JosdkInformer(LeanPodStore store) {
      this.store = store;
    }

    @Override
    public String name() {
      return PodCache.SOURCE_PREFIX + NS;
    }

    @Override
    public Optional<Pod> get(ResourceID pod) {
      Pod held = temporary.get(pod);
      return held != null
          ? Optional.of(held)
          : Optional.ofNullable(store.get(pod.getNamespace().orElseThrow() + "/" + pod.getName()));
    }

    @Override
    public void handleRecentResourceUpdate(ResourceID pod, Pod written, Pod base) {
      Pod cached = get(pod).orElse(null);
      if (cached != null
          && cached
              .getMetadata()
              .getResourceVersion()
              .equals(base.getMetadata().getResourceVersion())) {
        temporary.put(pod, written);
      } else {
        temporary.remove(pod);
      }
    }

    /** A watch event: fabric8 stores the pod, then JOSDK's handler drops the temporary copy. */
    void event(Pod pod) {
      store.put(Cache.metaNamespaceKeyFunc(pod), pod);
      temporary.remove(ResourceID.fromResource(pod));
    }
  }

  private static Pod listed() {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(NS)
        .withName("engine-0")
        .withUid("u0")
        .withResourceVersion("10")
        .withLabels(Map.of("app", "a"))
        .endMetadata()
        .withNewStatus()
        .withPhase("Running")
        .endStatus()
        .build();
  }

  /** The condition write (pods/status), with policy a's verdict record. */
  private static Pod conditionWritten(Pod base) {
    return new PodBuilder(base)
        .editMetadata()
        .withResourceVersion("11")
        .withAnnotations(Map.of(GateNames.VERDICTS_ANNOTATION, "{\"policy-a\":{\"role\":\"r\"}}"))
        .endMetadata()
        .editStatus()
        .withConditions(
            new PodConditionBuilder().withType(GateNames.CONDITION_TYPE).withStatus("True").build())
        .endStatus()
        .build();
  }

  /** The label write that follows it. */
  private static Pod labelWritten(Pod base) {
    return new PodBuilder(base)
        .editMetadata()
        .withResourceVersion("12")
        .addToLabels(GateNames.VERIFIED_LABEL, "true")
        .endMetadata()
        .build();
  }

  private static String version(Pod pod) {
    return pod.getMetadata().getResourceVersion();
  }

  private static List<String> versions(List<Pod> found) {
    return found.stream().map(PodCacheOwnWritesTest::version).toList();
  }

  /** Policy a's pass: its condition write, then its label write, each cached as it is accepted. */
  private Pod passOfPolicyAWrites() {
    Pod listed = listed();
    informer.event(listed);
    pods.cached(NS, informer, store, FILTER);
    Pod condition = conditionWritten(listed);
    pods.written(condition, listed);
    Pod label = labelWritten(condition);
    pods.written(label, condition);
    return condition;
  }

  @Test
  void anotherPolicysLookupMeanwhileLeavesTheLabelWriteReadAfterTheConditionsEventCame() {
    Pod condition = passOfPolicyAWrites();

    // Policy b's pass, before any watch event: the pod is not b's (nor under b's label).
    assertThat(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=b")).isEmpty();

    // The condition write's event comes; the label write's is still on its way.
    informer.event(condition);

    // Policy a's next pass (that event triggered it) reads the label it wrote.
    List<Pod> selected = pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=a");
    assertThat(versions(selected)).containsExactly("12");
    assertThat(selected.get(0).getMetadata().getLabels())
        .containsEntry(GateNames.VERIFIED_LABEL, "true");
    assertThat(pods.get(ResourceID.fromResource(condition)).map(PodCacheOwnWritesTest::version))
        .contains("12");
    assertThat(pods.list(NS).map(PodCacheOwnWritesTest::version)).containsExactly("12");
  }

  @Test
  void theWritingPolicysOwnRecordLookupFindsThePodAndKeepsTheWrite() {
    Pod condition = passOfPolicyAWrites();

    // The store's pod (as listed) carries no record, the writes do: the lookup of the pods
    // policy a recorded finds it as last written.
    assertThat(versions(pods.byIndex(NS, SelectionIndex.POD_RECORDED_BY, NS + "/policy-a")))
        .containsExactly("12");

    informer.event(condition);
    assertThat(versions(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=a")))
        .containsExactly("12");
  }

  private static Pod at(Pod pod, String version) {
    return new PodBuilder(pod).editMetadata().withResourceVersion(version).endMetadata().build();
  }

  /**
   * The pass read the pod at rv 10 from a store behind the API server (the kubelet wrote rv 11,
   * whose event is on its way): the condition write's resourceVersion test failed, PodGate read the
   * pod again and wrote rv 12 on rv 11, then the label (rv 13). Until the kubelet's event comes the
   * store still shows rv 10, a version the writes replaced though neither was planned on it; a
   * lookup meanwhile must not take it for a newer one and forget the writes.
   */
  @Test
  void aWriteReplannedAfterAConflictIsKeptWhileTheStoreStillShowsTheVersionThePassRead() {
    Pod listed = listed();
    informer.event(listed);
    pods.cached(NS, informer, store, FILTER);
    Pod kubelet =
        at(new PodBuilder(listed).editStatus().withPodIP("10.0.0.7").endStatus().build(), "11");
    Pod condition = at(conditionWritten(kubelet), "12");
    pods.written(condition, kubelet, listed);
    Pod label = at(labelWritten(condition), "13");
    pods.written(label, condition, listed);

    // Policy b's pass looks up its pods while the store still shows rv 10.
    assertThat(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=b")).isEmpty();

    // The kubelet's event comes (it triggers policy a's pass); the writes' events are on their way.
    informer.event(kubelet);
    List<Pod> selected = pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=a");
    assertThat(versions(selected)).containsExactly("13");
    assertThat(versions(pods.byIndex(NS, SelectionIndex.POD_RECORDED_BY, NS + "/policy-a")))
        .containsExactly("13");
  }

  /**
   * The write's watch event lands between the lookup's read of the store's index (which did not
   * file the pod under the key yet) and its read of the store's copy (which shows the write): the
   * pod is under the key before and after, so the lookup finds it.
   */
  @Test
  void theWritesEventLandingMidLookupLeavesThePodFound() {
    Pod listed = listed();
    store.put(Cache.metaNamespaceKeyFunc(listed), listed);
    OwnWrites writes = new OwnWrites();
    Pod condition = conditionWritten(listed);
    writes.written(LeanPodStore.lean(condition), listed);
    String key = NS + "/policy-a";
    List<Pod> indexed = store.byIndex(SelectionIndex.POD_RECORDED_BY, key);

    List<Pod> found =
        writes.overIndex(
            NS,
            key,
            indexed,
            id -> {
              store.put(Cache.metaNamespaceKeyFunc(condition), condition);
              return store.kept(id);
            },
            SelectionIndex.podIndexers().get(SelectionIndex.POD_RECORDED_BY));

    assertThat(versions(found)).containsExactly("11");
  }

  @Test
  void theWriteIsForgottenOnceTheStoreShowsIt() {
    Pod condition = passOfPolicyAWrites();
    informer.event(condition);
    Pod label = labelWritten(condition);
    informer.event(label);

    assertThat(versions(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=a")))
        .containsExactly("12");
    assertThat(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=b")).isEmpty();
    // A later write by someone else (rv 13) is read as the store shows it.
    Pod kubelet =
        new PodBuilder(label).editMetadata().withResourceVersion("13").endMetadata().build();
    informer.event(kubelet);
    assertThat(versions(pods.byIndex(NS, SelectionIndex.POD_LABEL, NS + "/app=a")))
        .containsExactly("13");
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import io.kvguard.gate.GateNames;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * A namespace's pod cache keeps whole (lean) only the pods a ModelDeployment there selects or that
 * carry something kvguard wrote; any other pod is held as its key alone. Checked in fabric8's own
 * informer cache (CacheImpl, the class every pod informer stores through), whose indexes must
 * neither list a pod held as a key nor keep entries of pods that changed or went.
 */
class PodCacheFilterTest {
  private static final String NS = "inference";
  private static final LabelSelector SERVE =
      new LabelSelectorBuilder().withMatchLabels(Map.of("app", "glm", "role", "serve")).build();
  private static final LabelSelector ROLE_IN =
      new LabelSelectorBuilder()
          .withMatchExpressions(
              new LabelSelectorRequirementBuilder()
                  .withKey("role")
                  .withOperator("In")
                  .withValues("prefill", "decode")
                  .build())
          .build();
  private static final PodCacheFilter FILTER = new PodCacheFilter(Set.of(SERVE, ROLE_IN));

  private static Pod pod(String name, Map<String, String> labels, UnaryOperator<PodBuilder> more) {
    return more.apply(
            new PodBuilder()
                .withNewMetadata()
                .withNamespace(NS)
                .withName(name)
                .withResourceVersion("1")
                .withLabels(labels)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("engine")
                .withImage("vllm")
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase("Running")
                .withPodIP("10.0.0.7")
                .endStatus())
        .build();
  }

  private static Pod pod(String name, Map<String, String> labels) {
    return pod(name, labels, b -> b);
  }

  @Test
  void keepsThePodsASelectorOfTheNamespaceSelects() {
    assertThat(
            FILTER.keeps(
                pod("serve-0", Map.of("app", "glm", "role", "serve", "pod-template-hash", "abc"))))
        .isTrue();
    assertThat(FILTER.keeps(pod("decode-0", Map.of("role", "decode"))))
        .as("matchExpressions")
        .isTrue();
    assertThat(FILTER.keeps(pod("batch-0", Map.of("app", "glm", "role", "batch")))).isFalse();
    assertThat(FILTER.keeps(pod("bare", null))).isFalse();
    assertThat(
            new PodCacheFilter(Set.of())
                .keeps(pod("serve-0", Map.of("app", "glm", "role", "serve"))))
        .as("no policy in the namespace selects anything")
        .isFalse();
  }

  @Test
  void keepsEveryPodCarryingSomethingKvguardWroteWhetherOrNotAnythingSelectsIt() {
    Map<String, String> unselected = Map.of("app", "glm", "role", "batch");
    assertThat(
            FILTER.keeps(
                pod(
                    "recorded",
                    unselected,
                    b ->
                        b.editMetadata()
                            .addToAnnotations(GateNames.VERDICTS_ANNOTATION, "{\"glm\":{}}")
                            .endMetadata())))
        .as("verdict record")
        .isTrue();
    assertThat(
            FILTER.keeps(
                pod(
                    "conditioned",
                    unselected,
                    b ->
                        b.editStatus()
                            .addNewCondition()
                            .withType(GateNames.CONDITION_TYPE)
                            .withStatus("True")
                            .endCondition()
                            .endStatus())))
        .as("condition")
        .isTrue();
    assertThat(
            FILTER.keeps(
                pod("labelled", Map.of("role", "batch", GateNames.VERIFIED_LABEL, "true"))))
        .as("routing label")
        .isTrue();
    assertThat(
            FILTER.keeps(
                pod("context", Map.of("role", "batch", GateNames.CONTEXT_LENGTH_LABEL, "0-4096"))))
        .as("context-length label")
        .isTrue();
    assertThat(
            FILTER.keeps(
                pod(
                    "gated",
                    unselected,
                    b ->
                        b.editSpec()
                            .addNewReadinessGate()
                            .withConditionType(GateNames.CONDITION_TYPE)
                            .endReadinessGate()
                            .endSpec())))
        .as("readiness gate")
        .isTrue();
    assertThat(
            FILTER.keeps(
                pod(
                    "other-condition",
                    unselected,
                    b ->
                        b.editStatus()
                            .addNewCondition()
                            .withType("Ready")
                            .withStatus("True")
                            .endCondition()
                            .endStatus())))
        .isFalse();
  }

  @Test
  void
      inTheInformersCacheAnUnselectedPodIsAKeyAloneAndNoIndexKeepsAnEntryOfAPodThatChangedOrWent() {
    CacheImpl<Pod> cache = new CacheImpl<>();
    LeanPodStore store = new LeanPodStore(NS, FILTER);
    cache.setItemStore(store);
    String labelKey = NS + "/role=batch";
    String servedKey = NS + "/role=serve";

    Pod batch = pod("batch-0", Map.of("app", "glm", "role", "batch"));
    assertThat(cache.put(batch)).isNull();
    Pod held = cache.getByKey(NS + "/batch-0");
    assertThat(LeanPodStore.isKeyOnly(held)).isTrue();
    assertThat(held.getMetadata().getName()).isEqualTo("batch-0");
    assertThat(held.getMetadata().getNamespace()).isEqualTo(NS);
    assertThat(held.getMetadata().getLabels()).isNullOrEmpty();
    assertThat(held.getSpec()).isNull();
    assertThat(store.byIndex(SelectionIndex.POD_LABEL, labelKey)).isEmpty();

    // Relabelled into a selector: the next event stores the pod (lean) and indexes it.
    Pod moved =
        pod(
            "batch-0",
            Map.of("app", "glm", "role", "serve"),
            b -> b.editMetadata().withResourceVersion("2").endMetadata());
    assertThat(LeanPodStore.isKeyOnly(cache.put(moved))).as("what it replaced").isTrue();
    assertThat(store.byIndex(SelectionIndex.POD_LABEL, servedKey))
        .singleElement()
        .satisfies(p -> assertThat(p.getMetadata().getLabels()).containsEntry("role", "serve"))
        .satisfies(p -> assertThat(LeanPodStore.isKeyOnly(p)).isFalse());

    // Relabelled out again, then deleted: no index holds it any more.
    Pod out =
        pod(
            "batch-0",
            Map.of("app", "glm", "role", "batch"),
            b -> b.editMetadata().withResourceVersion("3").endMetadata());
    cache.put(out);
    assertThat(store.byIndex(SelectionIndex.POD_LABEL, servedKey)).isEmpty();
    assertThat(store.filed(SelectionIndex.POD_LABEL, servedKey)).isEmpty();
    assertThat(store.filed(SelectionIndex.POD_LABEL, labelKey)).isEmpty();
    assertThat(LeanPodStore.isKeyOnly(cache.getByKey(NS + "/batch-0"))).isTrue();
    assertThat(cache.remove(out)).isNotNull();
    assertThat(cache.listKeys()).isEmpty();
    assertThat(cache.indexKeys(CacheImpl.NAMESPACE_INDEX, NS))
        .as("fabric8's own namespace index")
        .isEmpty();
  }

  @Test
  void aKeptPodsIndexEntriesGoWithIt() {
    CacheImpl<Pod> cache = new CacheImpl<>();
    LeanPodStore store = new LeanPodStore(NS, FILTER);
    cache.setItemStore(store);
    Pod serve =
        pod(
            "serve-0",
            Map.of("app", "glm", "role", "serve"),
            b ->
                b.editMetadata()
                    .addToAnnotations(
                        GateNames.VERDICTS_ANNOTATION, "{\"glm\":{\"verdict\":\"Verified\"}}")
                    .endMetadata());
    cache.put(serve);
    assertThat(store.byIndex(SelectionIndex.POD_RECORDED_BY, NS + "/glm")).hasSize(1);
    assertThat(cache.list())
        .singleElement()
        .satisfies(p -> assertThat(LeanPodStore.isKeyOnly(p)).isFalse());
    cache.remove(serve);
    assertThat(store.filed(SelectionIndex.POD_RECORDED_BY, NS + "/glm")).isEmpty();
    assertThat(store.filed(SelectionIndex.POD_LABEL, NS + "/role=serve")).isEmpty();
    assertThat(cache.indexKeys(CacheImpl.NAMESPACE_INDEX, NS)).isEmpty();
    assertThat(List.copyOf(cache.listKeys())).isEmpty();
  }
}

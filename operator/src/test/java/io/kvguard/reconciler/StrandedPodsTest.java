package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.gate.GateNames;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which pods count as stranded (issue 28 §2): a deleted policy's record and a gate still on them,
 * selected by none. Everything else a pod of a guarded namespace can show must not raise the alert.
 */
class StrandedPodsTest {
  private static final Map<String, String> SERVE = Map.of("app", "glm");
  private static final LabelSelector SELECTS_SERVE =
      new LabelSelectorBuilder().withMatchLabels(SERVE).build();

  private static PodBuilder pod(String records, String status, String reason, boolean label) {
    PodBuilder pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("serve-0")
            .withNamespace("inference")
            .addToLabels(SERVE)
            .endMetadata();
    if (records != null) {
      pod.editMetadata().addToAnnotations(GateNames.VERDICTS_ANNOTATION, records).endMetadata();
    }
    if (label) {
      pod.editMetadata().addToLabels(GateNames.VERIFIED_LABEL, "true").endMetadata();
    }
    if (status != null) {
      pod.withNewStatus()
          .addNewCondition()
          .withType(GateNames.CONDITION_TYPE)
          .withStatus(status)
          .withReason(reason)
          .endCondition()
          .endStatus();
    }
    return pod;
  }

  private static boolean stranded(Pod pod, Set<String> existing, List<LabelSelector> selectors) {
    return StrandedPods.isStranded(pod, existing, selectors);
  }

  @Test
  void aPodWhoseOnlyPolicyIsGoneAndThatKeepsItsGateIsStranded() {
    Pod verified = pod("{\"glm\":{\"role\":\"serve\"}}", "True", "PoolSufficient", true).build();
    Pod refused = pod("{\"glm\":{\"role\":\"serve\"}}", "False", "PoolTooSmall", false).build();
    assertThat(stranded(verified, Set.of(), List.of())).isTrue();
    assertThat(stranded(refused, Set.of("other"), List.of())).isTrue();
  }

  @Test
  void aPodALivePolicyStillHoldsIsNotStranded() {
    Pod pod = pod("{\"glm\":{\"role\":\"serve\"}}", "True", "PoolSufficient", true).build();
    assertThat(stranded(pod, Set.of("glm"), List.of())).as("its policy exists").isFalse();
    assertThat(stranded(pod, Set.of("rescue"), List.of(SELECTS_SERVE)))
        .as("another policy selects it")
        .isFalse();
  }

  @Test
  void aPodLetGoShutByALivePolicyOrHandedBackOpenIsNotStranded() {
    Pod noLongerSelected = pod(null, "False", "NoLongerSelected", false).build();
    Pod handedBackWithAnOlderRecordLeft =
        pod("{\"churn-19\":{\"role\":\"serve\"}}", "True", "PolicyRemoved", false).build();
    assertThat(stranded(noLongerSelected, Set.of(), List.of())).isFalse();
    assertThat(stranded(handedBackWithAnOlderRecordLeft, Set.of(), List.of())).isFalse();
  }

  @Test
  void aPodBeingDeletedIsNotStranded() {
    Pod pod =
        pod("{\"glm\":{\"role\":\"serve\"}}", "True", "PoolSufficient", true)
            .editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    assertThat(stranded(pod, Set.of(), List.of())).isFalse();
  }

  @Test
  void theNamespaceCountTakesItsPoliciesNamesAndSelectors() {
    Pod pod = pod("{\"glm\":{\"role\":\"serve\"}}", "True", "PoolSufficient", true).build();
    assertThat(StrandedPods.count(java.util.stream.Stream.of(pod), List.of())).isEqualTo(1);
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which pods a role's selector takes, as Kubernetes defines it, and which selectors kvguard refuses
 * to apply.
 */
class LabelSelectorsTest {
  private static final Map<String, String> PREFILL =
      Map.of("app", "glm", "role", "prefill", "tier", "gold");

  private static LabelSelector expressions(LabelSelectorRequirement... requirements) {
    return new LabelSelectorBuilder().withMatchExpressions(requirements).build();
  }

  private static LabelSelectorRequirement requirement(
      String key, String operator, String... values) {
    return new LabelSelectorRequirement(key, operator, values.length == 0 ? null : List.of(values));
  }

  @Test
  void matchLabelsTakesPodsCarryingEveryPairWhateverElseTheyCarry() {
    LabelSelector selector =
        new LabelSelectorBuilder().withMatchLabels(Map.of("app", "glm", "role", "prefill")).build();

    assertThat(LabelSelectors.matches(selector, PREFILL)).isTrue();
    assertThat(LabelSelectors.matches(selector, Map.of("app", "glm", "role", "decode"))).isFalse();
    assertThat(LabelSelectors.matches(selector, Map.of("app", "glm"))).isFalse();
    assertThat(LabelSelectors.matches(selector, null)).isFalse();
  }

  @Test
  void eachOperatorMeansWhatKubernetesSays() {
    assertThat(
            LabelSelectors.matches(
                expressions(requirement("role", "In", "prefill", "decode")), PREFILL))
        .isTrue();
    assertThat(LabelSelectors.matches(expressions(requirement("role", "In", "decode")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.matches(expressions(requirement("role", "NotIn", "decode")), PREFILL))
        .isTrue();
    assertThat(
            LabelSelectors.matches(expressions(requirement("role", "NotIn", "prefill")), PREFILL))
        .isFalse();
    // NotIn and DoesNotExist take a pod that lacks the label altogether; In and Exists do not.
    assertThat(LabelSelectors.matches(expressions(requirement("zone", "NotIn", "a")), PREFILL))
        .isTrue();
    assertThat(LabelSelectors.matches(expressions(requirement("zone", "In", "a")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.matches(expressions(requirement("tier", "Exists")), PREFILL))
        .isTrue();
    assertThat(LabelSelectors.matches(expressions(requirement("zone", "Exists")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.matches(expressions(requirement("zone", "DoesNotExist")), PREFILL))
        .isTrue();
    assertThat(LabelSelectors.matches(expressions(requirement("tier", "DoesNotExist")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.matches(expressions(requirement("zone", "DoesNotExist")), null))
        .isTrue();
  }

  @Test
  void matchLabelsAndEveryExpressionMustAllHold() {
    LabelSelector selector =
        new LabelSelectorBuilder()
            .withMatchLabels(Map.of("app", "glm"))
            .withMatchExpressions(
                requirement("role", "In", "prefill"), requirement("tier", "NotIn", "bronze"))
            .build();

    assertThat(LabelSelectors.matches(selector, PREFILL)).isTrue();
    assertThat(
            LabelSelectors.matches(
                selector, Map.of("app", "glm", "role", "prefill", "tier", "bronze")))
        .isFalse();
    assertThat(LabelSelectors.matches(selector, Map.of("app", "other", "role", "prefill")))
        .isFalse();
  }

  @Test
  void aMatchLabelsEntryWithoutAValueIsAProblemAndSelectsNoPodInsteadOfThrowing() {
    // What the API server never stores, but the pod cache's filter must not throw on: it runs for
    // every pod of the namespace as the informer stores it.
    java.util.Map<String, String> labels = new java.util.HashMap<>();
    labels.put("app", null);
    LabelSelector selector = new LabelSelectorBuilder().withMatchLabels(labels).build();

    assertThat(LabelSelectors.problem(selector)).hasValue("matchLabels app has no value");
    assertThat(LabelSelectors.matches(selector, Map.of("app", "glm"))).isFalse();
    assertThat(
            new PodCacheFilter(java.util.Set.of(selector))
                .keeps(
                    new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withNewMetadata()
                        .withName("serve-0")
                        .withLabels(Map.of("app", "glm"))
                        .endMetadata()
                        .build()))
        .isFalse();
  }

  @Test
  void anEmptySelectorIsRefusedInsteadOfSelectingEveryPod() {
    LabelSelector empty = new LabelSelector();

    assertThat(LabelSelectors.problem(empty))
        .contains("selector is empty and would select every pod in the namespace");
    assertThat(LabelSelectors.matches(empty, PREFILL)).isFalse();
    assertThat(
            LabelSelectors.problem(
                new LabelSelectorBuilder()
                    .withMatchLabels(Map.of())
                    .withMatchExpressions(List.of())
                    .build()))
        .contains("selector is empty and would select every pod in the namespace");
    assertThat(LabelSelectors.problem(null)).contains("selector is missing");
    assertThat(LabelSelectors.matches(null, PREFILL)).isFalse();
  }

  @Test
  void aSelectorKubernetesWouldRejectSelectsNothingAndSaysWhy() {
    assertThat(LabelSelectors.problem(expressions(requirement("role", "in", "prefill"))))
        .contains("matchExpression role has unknown operator in");
    assertThat(LabelSelectors.matches(expressions(requirement("role", "in", "prefill")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.problem(expressions(requirement("role", "In"))))
        .contains("matchExpression role In needs values");
    assertThat(LabelSelectors.problem(expressions(requirement("role", "NotIn"))))
        .contains("matchExpression role NotIn needs values");
    assertThat(LabelSelectors.problem(expressions(requirement("tier", "Exists", "gold"))))
        .contains("matchExpression tier Exists takes no values");
    assertThat(LabelSelectors.matches(expressions(requirement("tier", "Exists", "gold")), PREFILL))
        .isFalse();
    assertThat(LabelSelectors.problem(expressions(requirement(" ", "Exists"))))
        .contains("a matchExpression has no key");
    assertThat(LabelSelectors.problem(expressions(requirement("role", "In", "prefill")))).isEmpty();
  }
}

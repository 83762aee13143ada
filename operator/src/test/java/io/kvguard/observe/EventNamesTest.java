package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class EventNamesTest {
  private static final InvolvedObject GLM =
      new InvolvedObject(
          "kvguard.io/v1alpha1",
          "ModelDeployment",
          "inference",
          "glm",
          "4f1c2a7e-0000-4000-8000-000000000001");

  @Test
  void oneNamePerObjectTypeAndReasonTheSameOnEveryReplica() {
    String name = EventNames.of(GLM, "Warning", "ProbeFailed");
    assertThat(name)
        .matches("glm\\.[0-9a-f]{16}")
        .isEqualTo(EventNames.of(GLM, "Warning", "ProbeFailed"));
    assertThat(EventNames.of(GLM, "Warning", "PoolTooSmall")).isNotEqualTo(name);
    InvolvedObject recreated =
        new InvolvedObject(
            GLM.apiVersion(),
            GLM.kind(),
            GLM.namespace(),
            GLM.name(),
            "4f1c2a7e-0000-4000-8000-000000000002");
    assertThat(EventNames.of(recreated, "Warning", "ProbeFailed"))
        .as("a new object under the same name")
        .isNotEqualTo(name);
  }

  @Test
  void theLongestObjectNameStillGivesAValidName() {
    InvolvedObject longest =
        new InvolvedObject(
            GLM.apiVersion(),
            GLM.kind(),
            GLM.namespace(),
            "a".repeat(235) + "-" + "b".repeat(17),
            GLM.uid());
    String name = EventNames.of(longest, "Normal", "PoolVerified");
    assertThat(name).hasSizeLessThanOrEqualTo(253).matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
    assertThat(name).startsWith("a".repeat(235) + ".");
  }
}

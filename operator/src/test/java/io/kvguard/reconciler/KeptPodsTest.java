package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KeptPodsTest {
  private static final ResourceID GLM = new ResourceID("glm", "inference");
  private static final ResourceID OTHER = new ResourceID("other", "inference");
  private final KeptPods kept = new KeptPods();

  @Test
  void podsAPolicyHadAndNoLongerHasAreGoneOnce() {
    assertThat(
            kept.gone(
                GLM,
                Map.of(
                    "uid-a",
                    new KeptPods.Kept("pod-a", "serve"),
                    "uid-b",
                    new KeptPods.Kept("pod-b", "serve"))))
        .isEmpty();
    kept.gone(OTHER, Map.of("uid-x", new KeptPods.Kept("pod-x", "serve")));

    // uid-b was deleted, uid-c is its replacement under the same name.
    assertThat(
            kept.gone(
                GLM,
                Map.of(
                    "uid-a",
                    new KeptPods.Kept("pod-a", "serve"),
                    "uid-c",
                    new KeptPods.Kept("pod-c", "serve"))))
        .containsOnlyKeys("uid-b");
    assertThat(
            kept.gone(
                GLM,
                Map.of(
                    "uid-a",
                    new KeptPods.Kept("pod-a", "serve"),
                    "uid-c",
                    new KeptPods.Kept("pod-c", "serve"))))
        .isEmpty();
    assertThat(kept.gone(OTHER, Map.of())).containsOnlyKeys("uid-x");
  }

  @Test
  void aForgottenPolicyStartsAfresh() {
    kept.gone(GLM, Map.of("uid-a", new KeptPods.Kept("pod-a", "serve")));
    kept.forget(GLM);
    assertThat(kept.gone(GLM, Map.of())).isEmpty();
  }
}

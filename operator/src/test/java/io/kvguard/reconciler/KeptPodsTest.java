package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeptPodsTest {
  private static final ResourceID GLM = new ResourceID("glm", "inference");
  private static final ResourceID OTHER = new ResourceID("other", "inference");
  private final KeptPods kept = new KeptPods();

  @Test
  void podsAPolicyHadAndNoLongerHasAreGoneOnce() {
    assertThat(kept.gone(GLM, Set.of("uid-a", "uid-b"))).isEmpty();
    kept.gone(OTHER, Set.of("uid-x"));

    // uid-b was deleted, uid-c is its replacement under the same name.
    assertThat(kept.gone(GLM, Set.of("uid-a", "uid-c"))).containsExactly("uid-b");
    assertThat(kept.gone(GLM, Set.of("uid-a", "uid-c"))).isEmpty();
    assertThat(kept.gone(OTHER, Set.of())).containsExactly("uid-x");
  }

  @Test
  void aForgottenPolicyStartsAfresh() {
    kept.gone(GLM, Set.of("uid-a"));
    kept.forget(GLM);
    assertThat(kept.gone(GLM, Set.of())).isEmpty();
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** KVGUARD_POD_LIST_CONCURRENCY: how many namespaces' pods are listed at once. */
class PodListConcurrencyTest {
  private static final String VAR = "KVGUARD_POD_LIST_CONCURRENCY";

  @Test
  void unsetOrBlankIsOneNamespaceAtATime() {
    assertThat(PodCache.listConcurrency(Map.of())).isEqualTo(1);
    assertThat(PodCache.listConcurrency(Map.of(VAR, " "))).isEqualTo(1);
  }

  @Test
  void aWholeNumberInRangeIsTaken() {
    assertThat(PodCache.listConcurrency(Map.of(VAR, " 3 "))).isEqualTo(3);
    assertThat(PodCache.listConcurrency(Map.of(VAR, "64"))).isEqualTo(64);
  }

  @Test
  void zeroTooManyOrNotANumberIsRefusedAtStart() {
    assertThatThrownBy(() -> PodCache.listConcurrency(Map.of(VAR, "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(VAR);
    assertThatThrownBy(() -> PodCache.listConcurrency(Map.of(VAR, "65")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> PodCache.listConcurrency(Map.of(VAR, "two")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole number");
  }
}

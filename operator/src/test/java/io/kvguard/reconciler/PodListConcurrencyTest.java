package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvguard.KvguardConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** KVGUARD_POD_LIST_CONCURRENCY: how many namespaces' pods are listed at once. */
class PodListConcurrencyTest {
  private static final String VAR = "KVGUARD_POD_LIST_CONCURRENCY";

  private static int listConcurrency(Map<String, String> env) {
    return KvguardConfig.fromEnvironment(env).podListConcurrency();
  }

  @Test
  void unsetOrBlankIsOneNamespaceAtATime() {
    assertThat(listConcurrency(Map.of())).isEqualTo(1);
    assertThat(listConcurrency(Map.of(VAR, " "))).isEqualTo(1);
  }

  @Test
  void aWholeNumberInRangeIsTaken() {
    assertThat(listConcurrency(Map.of(VAR, " 3 "))).isEqualTo(3);
    assertThat(listConcurrency(Map.of(VAR, "64"))).isEqualTo(64);
  }

  @Test
  void zeroTooManyOrNotANumberIsRefusedAtStart() {
    assertThatThrownBy(() -> listConcurrency(Map.of(VAR, "0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(VAR);
    assertThatThrownBy(() -> listConcurrency(Map.of(VAR, "65")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> listConcurrency(Map.of(VAR, "two")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("whole number");
  }
}

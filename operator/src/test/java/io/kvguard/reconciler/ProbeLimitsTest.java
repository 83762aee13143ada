package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvguard.KvguardConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProbeLimitsTest {
  @Test
  void aNamespaceMayHaveAsManyHungProbesAsItsShare() {
    TenantFairExecutor.Hung hung = new ProbeLimits(32, 4, 4).hung();
    assertThat(hung.limit()).isEqualTo(256);
    assertThat(hung.perTenant()).isEqualTo(4);
    assertThat(hung.after()).isEqualTo(ProbeLimits.DEFAULT_HUNG_AFTER);
  }

  @Test
  void aLimitOfZeroIsTheRuleBeforeNoProbeEverCountsAsHung() {
    Map<String, String> env = Map.of("KVGUARD_HUNG_PROBE_LIMIT", "0");
    KvguardConfig config = KvguardConfig.fromEnvironment(env);
    assertThat(
            new ProbeLimits(32, 4, 4, config.hungProbeLimit(), ProbeLimits.DEFAULT_HUNG_AFTER)
                .hung())
        .isEqualTo(TenantFairExecutor.Hung.NEVER);
  }

  @Test
  void aLimitOutsideItsBoundsIsRefusedAtStart() {
    assertThatThrownBy(
            () -> KvguardConfig.fromEnvironment(Map.of("KVGUARD_HUNG_PROBE_LIMIT", "4097")))
        .hasMessageContaining("KVGUARD_HUNG_PROBE_LIMIT must be between 0 and 4096");
    assertThatThrownBy(
            () -> KvguardConfig.fromEnvironment(Map.of("KVGUARD_HUNG_PROBE_LIMIT", "-1")))
        .hasMessageContaining("KVGUARD_HUNG_PROBE_LIMIT");
  }
}

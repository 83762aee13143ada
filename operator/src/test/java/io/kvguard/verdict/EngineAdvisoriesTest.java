package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * Advisories with a verified fixed release refuse; those without one warn, whatever the version,
 * and say why.
 */
class EngineAdvisoriesTest {
  private static final long WINDOW = 1_048_576;

  private static PoolObservation seen(String version, String mode) {
    return new PoolObservation(2_040_000, OptionalLong.of(WINDOW), version, mode, List.of());
  }

  private static PoolPolicy policy(String engine) {
    return new PoolPolicy(WINDOW, 1.0, false, VersionRules.of(engine, null, false, true));
  }

  private static List<String> warned(String engine, String version, String mode) {
    return EngineAdvisories.warnings(policy(engine).versions(), seen(version, mode)).stream()
        .map(w -> w.advisory().id())
        .toList();
  }

  @Test
  void theIncidentsFixedReleaseIsMarkedAsNamedByThePostMortemAlone() {
    EngineAdvisories.Advisory pd =
        EngineAdvisories.BUILT_IN.stream()
            .filter(a -> a.id().equals("sglang-pd-abort-before-0.5.22"))
            .findFirst()
            .orElseThrow();
    assertThat(pd.fix()).isInstanceOf(EngineAdvisories.Fix.Claimed.class);
    assertThat(pd.refuses()).isTrue();
    assertThat(pd.clearsAtFix()).isFalse();
    assertThat(((EngineAdvisories.Fix.Claimed) pd.fix()).source())
        .contains("post-mortem alone", "#33508", "#33507");
  }

  @Test
  void sglangPrefillDecodeAtTheClaimedFixStaysShutAndIsWarnedAboutIssues30233And32605() {
    PoolVerdict verdict =
        PoolJudge.judge(policy("sglang"), ProbeOutcome.observed(seen("0.5.22", "decode")));
    assertThat(verdict.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
    assertThat(((EngineAdvisories.Fix.Claimed) EngineAdvisories.BUILT_IN.get(0).fix()).proof())
        .contains("--pd-router", "spec.engineAdvisories: Disabled");

    List<EngineAdvisories.Warning> warnings =
        EngineAdvisories.warnings(policy("sglang").versions(), seen("0.5.22", "decode"));
    assertThat(warnings)
        .extracting(w -> w.advisory().id())
        .containsExactly("sglang-pd-admission-abort");
    assertThat(warnings.get(0).message())
        .contains("#30233", "#32605")
        .contains(
            "kvguard warns instead of refusing because no fixed release is verified in the engine's tags")
        .contains("#33508", "#33507", "#30325", "#34208", "#35421");
  }

  @Test
  void theRefusingAdvisoryStillRefusesAndUnifiedServingIsNotWarned() {
    assertThat(
            PoolJudge.judge(policy("sglang"), ProbeOutcome.observed(seen("0.5.21", "prefill")))
                .reason())
        .isEqualTo(GateReason.KnownUnsafeEngine);
    assertThat(warned("sglang", "0.5.22", null)).isEmpty();
  }

  @Test
  void vllmIsWarnedAboutThePrefixCacheHashBelowTheReleaseItsNotesNameAndWhenItsVersionIsUnknown() {
    assertThat(warned("vllm", "0.7.1", null))
        .contains("vllm-prefix-cache-hash-GHSA-rm76-4mrf-v9r8");
    assertThat(warned("vllm", "0.0.0.dev1+gabc", null))
        .contains("vllm-prefix-cache-hash-GHSA-rm76-4mrf-v9r8");
    assertThat(warned("vllm", "0.7.2", null))
        .doesNotContain("vllm-prefix-cache-hash-GHSA-rm76-4mrf-v9r8");
    assertThat(warned("vllm", "0.11.0", null))
        .doesNotContain("vllm-prefix-cache-hash-GHSA-rm76-4mrf-v9r8");
    // Warned, never refused: an unverified fixed release decides nothing, not even for an unknown
    // version.
    assertThat(PoolJudge.judge(policy("vllm"), ProbeOutcome.observed(seen("0.7.1", null))).reason())
        .isEqualTo(GateReason.PoolSufficient);
    assertThat(PoolJudge.judge(policy("vllm"), ProbeOutcome.observed(seen(null, null))).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void tensorrtLlmAndKvbmConfigurationsKvguardCannotSeeAreWarnedForEveryVersion() {
    assertThat(warned("trtllm", null, null))
        .containsExactly("trtllm-host-kv-cache-8813", "dynamo-kvbm-disk-onboard-15079");
    assertThat(warned("vllm", "0.11.0", null)).containsExactly("dynamo-kvbm-disk-onboard-15079");
    assertThat(PoolJudge.judge(policy("trtllm"), ProbeOutcome.observed(seen(null, null))).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void disabledAdvisoriesNeitherRefuseNorWarn() {
    VersionRules off = VersionRules.of("sglang", null, false, false);
    assertThat(EngineAdvisories.warnings(off, seen("0.5.22", "prefill"))).isEmpty();
  }
}

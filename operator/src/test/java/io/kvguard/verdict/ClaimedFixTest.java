package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * SGLang's incident advisory names 0.5.22 as fixed on the post-mortem's word alone: a prefill or
 * decode pod's version refuses it below 0.5.22 and clears it nowhere. The table is mode × version ×
 * the ModelDeployment's advisory mode (and the role's allowUnknownVersions, which an unproven fix
 * must not bypass).
 */
class ClaimedFixTest {
  private static final long WINDOW = 1_048_576;
  private static final String DEV = "0.0.0.dev1+gbb737d7a8";

  private static PoolVerdict judge(
      String mode, String version, boolean advisories, boolean allowUnknown, boolean router) {
    VersionRules rules = VersionRules.of("sglang", null, allowUnknown, advisories);
    PoolPolicy policy =
        new PoolPolicy(WINDOW, 1.0, false, router ? rules.decidedByRouterProbe() : rules);
    return PoolJudge.judge(
        policy,
        ProbeOutcome.observed(
            new PoolObservation(
                2_040_000,
                OptionalLong.of(WINDOW),
                version.equals("absent") ? null : version,
                mode,
                List.of())));
  }

  @ParameterizedTest(name = "{0} {1}, advisories {2}, allowUnknownVersions {3}: {4}")
  @CsvSource({
    // Before the claimed release: refused by the advisory itself.
    "prefill, 0.5.21, Enabled, false, KnownUnsafeEngine, BEFORE",
    "decode, 0.5.21, Enabled, false, KnownUnsafeEngine, BEFORE",
    // At or after it: the version proves nothing, the gate stays shut and says why.
    "prefill, 0.5.22, Enabled, false, KnownUnsafeEngine, RELEASE",
    "decode, 0.5.22, Enabled, false, KnownUnsafeEngine, RELEASE",
    "prefill, 0.5.23, Enabled, false, KnownUnsafeEngine, RELEASE",
    "decode, v0.5.23, Enabled, false, KnownUnsafeEngine, RELEASE",
    // Unknown: cannot be placed either side, and allowUnknownVersions does not open it.
    "prefill, " + DEV + ", Enabled, false, KnownUnsafeEngine, UNKNOWN",
    "decode, " + DEV + ", Enabled, true, KnownUnsafeEngine, UNKNOWN",
    "prefill, absent, Enabled, true, KnownUnsafeEngine, UNKNOWN",
    "decode, absent, Enabled, false, KnownUnsafeEngine, UNKNOWN",
    // Advisories disabled: the platform team's documented acceptance of the risk.
    "prefill, 0.5.21, Disabled, false, PoolSufficient, ACCEPTED",
    "decode, 0.5.22, Disabled, false, PoolSufficient, ACCEPTED",
    "prefill, 0.5.23, Disabled, false, PoolSufficient, ACCEPTED",
    "decode, " + DEV + ", Disabled, false, PoolSufficient, ACCEPTED",
  })
  void aPrefillOrDecodePodIsNotVerifiedOnAClaimedFixedRelease(
      String mode,
      String version,
      String advisoryMode,
      boolean allowUnknown,
      GateReason reason,
      String why) {
    PoolVerdict verdict = judge(mode, version, advisoryMode.equals("Enabled"), allowUnknown, false);
    assertThat(verdict.reason()).isEqualTo(reason);
    assertThat(verdict.verified()).isEqualTo(why.equals("ACCEPTED"));
    switch (why) {
      case "BEFORE" ->
          assertThat(verdict.message())
              .startsWith("engine version 0.5.21: SGLang before 0.5.22 with prefill/decode")
              .contains("so kvguard keeps prefill/decode pods at 0.5.22 or later shut too");
      case "RELEASE" ->
          assertThat(verdict.message())
              .startsWith("engine version " + version + " in disaggregation mode " + mode + ": ")
              .contains(
                  "reaching release 0.5.22 does not clear advisory sglang-pd-abort-before-0.5.22")
              .contains("named as fixed by the incident's post-mortem alone; no tag read carries")
              .contains("#33508", "#33507")
              .contains("names no router");
      case "UNKNOWN" ->
          assertThat(verdict.message())
              .contains(
                  "it cannot be shown to be at or after release 0.5.22, and reaching that release"
                      + " would not clear advisory sglang-pd-abort-before-0.5.22 either")
              .doesNotContain("set allowUnknownVersions");
      default -> assertThat(verdict.message()).doesNotContain("sglang-pd-abort");
    }
    if (!why.equals("ACCEPTED") && !why.equals("BEFORE")) {
      // What the user can do today: test the route by hand, or accept the risk knowingly.
      assertThat(verdict.message())
          .contains(
              "`kvguard check --engine sglang --url http://ROUTER --rejection-probe --pd-router`")
          .contains("spec.engineAdvisories: Disabled")
          .contains("spec.enforcement: Audit");
    }
  }

  @ParameterizedTest(name = "through the router, {0} {1}: {2}")
  @CsvSource({
    "prefill, 0.5.21, KnownUnsafeEngine",
    "decode, 0.5.22, PoolSufficient",
    "prefill, 0.5.23, PoolSufficient",
    "decode, " + DEV + ", EngineVersionUnknown",
  })
  void throughTheRouterTheRejectionProbeDecidesNotTheVersion(
      String mode, String version, GateReason reason) {
    PoolVerdict verdict = judge(mode, version, true, false, true);
    assertThat(verdict.reason()).isEqualTo(reason);
    if (reason == GateReason.PoolSufficient) {
      assertThat(verdict.message())
          .endsWith(
              ", engine version "
                  + version
                  + " (advisory sglang-pd-abort-before-0.5.22: its fixed release is named by a"
                  + " post-mortem alone, so the rejection probe through the prefill/decode router"
                  + " decides, not the version)");
    }
  }

  @ParameterizedTest(name = "unified {0}")
  @CsvSource({"0.5.21", "0.5.22", DEV, "absent"})
  void unifiedServingIsNotConcerned(String version) {
    assertThat(judge(null, version, true, false, false).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }
}

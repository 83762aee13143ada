package io.kvguard.verdict;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvguard.customresource.Engine;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class PoolJudgeTest {
  private static final long WINDOW = 1_048_576;

  private static PoolVerdict judge(PoolPolicy policy, PoolObservation seen) {
    return PoolJudge.judge(policy, ProbeOutcome.observed(seen));
  }

  private static PoolObservation seen(long pool, Long engineContext, String version, String mode) {
    return new PoolObservation(
        pool,
        engineContext == null ? OptionalLong.empty() : OptionalLong.of(engineContext),
        version,
        mode,
        List.of());
  }

  private static PoolPolicy sglang(String minVersion, boolean allowUnknown, boolean advisories) {
    return new PoolPolicy(
        WINDOW, 1.0, false, VersionRules.of("sglang", minVersion, allowUnknown, advisories));
  }

  @Nested
  class Capacity {
    private final PoolPolicy policy = new PoolPolicy(WINDOW, 1.0, false);

    @Test
    void figuresBeyondAnyEngineAreNotAMeasurement() {
      PoolVerdict hugePool = judge(policy, seen(Long.MAX_VALUE, WINDOW, "0.5.22", null));
      assertThat(hugePool.reason()).isEqualTo(GateReason.ProbeFailed);
      assertThat(hugePool.message()).contains("beyond what any engine holds");
      PoolVerdict hugeContext = judge(policy, seen(2_040_000, Long.MAX_VALUE, "0.5.22", null));
      assertThat(hugeContext.reason()).isEqualTo(GateReason.ProbeFailed);
      // 2^40 itself is still a figure, judged as one.
      assertThat(judge(policy, seen(PoolJudge.PLAUSIBLE_TOKENS, WINDOW, "0.5.22", null)).verified())
          .isTrue();
    }

    @Test
    void theIncidentPrefillPoolIsTooSmall() {
      PoolVerdict verdict = judge(policy, seen(681_280, WINDOW, "0.5.22", "prefill"));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
      assertThat(verdict.message())
          .contains("KV pool 681280 tokens < context window 1048576 × 1.0")
          .contains("engine context 1048576 tokens > KV pool 681280 tokens");
    }

    @Test
    void aPoolTwiceTheWindowIsSufficient() {
      PoolVerdict verdict = judge(policy, seen(2_040_000, WINDOW, null, null));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Verified);
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
      assertThat(verdict.message())
          .isEqualTo(
              "KV pool 2040000 tokens >= context window 1048576 × 1.0, engine context 1048576 tokens");
    }

    @Test
    void theRatioIsRoundedUpAndAppliedExactly() {
      PoolPolicy headroom = new PoolPolicy(3, 1.5, false);
      assertThat(judge(headroom, seen(4, null, null, null)).reason())
          .isEqualTo(GateReason.PoolTooSmall);
      assertThat(judge(headroom, seen(5, null, null, null)).reason())
          .isEqualTo(GateReason.PoolSufficient);
      PoolPolicy huge = new PoolPolicy(Long.MAX_VALUE, 2.0, false);
      assertThat(judge(huge, seen(PoolJudge.PLAUSIBLE_TOKENS, null, null, null)).reason())
          .isEqualTo(GateReason.PoolTooSmall);
    }

    @Test
    void anEngineContextShorterThanTheWindowIsRefused() {
      PoolVerdict verdict = judge(policy, seen(2_000_000, 131_072L, null, null));
      assertThat(verdict.reason()).isEqualTo(GateReason.EngineContextTooShort);
      assertThat(verdict.message())
          .isEqualTo("engine context 131072 tokens < context window 1048576");
    }

    @Test
    void anEngineContextAboveThePoolIsRefusedUnlessTheRoleOptsOut() {
      PoolObservation above = seen(1_100_000, 2_000_000L, null, null);
      assertThat(judge(policy, above).reason()).isEqualTo(GateReason.EngineContextExceedsPool);
      assertThat(judge(new PoolPolicy(WINDOW, 1.0, true), above).reason())
          .isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void aFailedProbeOrAZeroPoolIsUnknown() {
      PoolVerdict failed =
          PoolJudge.judge(policy, ProbeOutcome.failed("GET /info answered HTTP 503"));
      assertThat(failed.verdict()).isEqualTo(Verdict.Unknown);
      assertThat(failed.reason()).isEqualTo(GateReason.ProbeFailed);
      assertThat(failed.message()).isEqualTo("GET /info answered HTTP 503");
      assertThat(judge(policy, seen(0, null, null, null)).reason())
          .isEqualTo(GateReason.ProbeFailed);
    }
  }

  @Nested
  class Precedence {
    @Test
    void capacityReasonsComeBeforeVersionReasonsAndTheMessageListsEveryFailure() {
      PoolPolicy policy = sglang("0.6.0", false, true);
      PoolVerdict verdict = judge(policy, seen(681_280, 2_000_000L, "0.5.21", "prefill"));
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
      assertThat(verdict.message())
          .contains("KV pool 681280 tokens < context window")
          .contains("engine context 2000000 tokens > KV pool 681280")
          .contains("to_finish")
          .contains("engine version 0.5.21 < minEngineVersion 0.6.0");
    }

    @Test
    void anAdvisoryComesBeforeTheMinimumVersion() {
      PoolVerdict verdict =
          judge(sglang("0.6.0", false, true), seen(2_040_000, WINDOW, "0.5.21", "decode"));
      assertThat(verdict.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
      assertThat(verdict.message()).contains("; engine version 0.5.21 < minEngineVersion 0.6.0");
    }

    @Test
    void theMinimumVersionComesBeforeAnUnknownVersion() {
      // A minimum that is no release (EngineVersionTooOld) and an advisory an unknown version
      // cannot be checked against (EngineVersionUnknown), both at once: TooOld is the reason, and
      // the message lists both.
      PoolPolicy policy =
          new PoolPolicy(
              WINDOW,
              1.0,
              false,
              new VersionRules(
                  "sglang",
                  Optional.of(EngineVersion.parse("latest")),
                  false,
                  List.of(
                      new EngineAdvisories.Advisory(
                          "sglang",
                          EngineVersion.release("0.5.22"),
                          EngineAdvisories.Disaggregation.ANY,
                          GateReason.KnownUnsafeEngine,
                          "x"))));
      PoolVerdict verdict = judge(policy, seen(2_040_000, WINDOW, "b1", null));
      assertThat(verdict.reason()).isEqualTo(GateReason.EngineVersionTooOld);
      assertThat(verdict.message())
          .contains("minEngineVersion is not a release version")
          .contains("b1 is not a release version, so it cannot be checked against");
    }
  }

  @Nested
  class Advisories {
    private final PoolObservation prefill0521 = seen(2_040_000, WINDOW, "0.5.21", "prefill");

    @Test
    void sglangBefore0522WithPrefillDisaggregationIsAKnownUnsafeEngine() {
      PoolVerdict verdict = judge(sglang(null, false, true), prefill0521);
      assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
      assertThat(verdict.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
      assertThat(verdict.message())
          .startsWith(
              "engine version 0.5.21: SGLang before 0.5.22 with prefill/decode disaggregation")
          .contains("one-token placeholder")
          .contains("to_finish")
          .contains("finished_reason")
          .contains("decode reads KV pages still holding other requests' data");
    }

    @Test
    void decodeIsAffectedToo() {
      assertThat(
              judge(sglang(null, false, true), seen(2_040_000, WINDOW, "v0.5.21", "decode"))
                  .reason())
          .isEqualTo(GateReason.KnownUnsafeEngine);
    }

    @Test
    void sglang0522InPrefillModeIsNotClearedByItsVersion() {
      // 0.5.22 is named as fixed by the post-mortem alone (ClaimedFixTest has the whole table).
      PoolVerdict verdict =
          judge(sglang(null, false, true), seen(2_040_000, WINDOW, "0.5.22", "prefill"));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
      assertThat(verdict.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
      assertThat(verdict.message())
          .startsWith(
              "engine version 0.5.22 in disaggregation mode prefill: reaching release 0.5.22 does"
                  + " not clear advisory sglang-pd-abort-before-0.5.22");
    }

    @Test
    void sglang0522ServingUnifiedIsAccepted() {
      PoolVerdict verdict =
          judge(sglang(null, false, true), seen(2_040_000, WINDOW, "0.5.22", null));
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
      assertThat(verdict.message()).endsWith(", engine version 0.5.22");
    }

    @Test
    void unifiedServingIsNotConcerned() {
      assertThat(judge(sglang(null, false, true), seen(2_040_000, WINDOW, "0.5.21", null)).reason())
          .isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void theAdvisoryIsAboutSglangOnly() {
      PoolPolicy vllm =
          new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("vllm", null, false, true));
      assertThat(judge(vllm, prefill0521).reason()).isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void disablingAdvisoriesAcceptsTheFlawedBuild() {
      assertThat(judge(sglang(null, false, false), prefill0521).reason())
          .isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void aDevBuildInPrefillModeIsRefusedEvenWhereUnknownVersionsAreAllowed() {
      PoolObservation dev = seen(2_040_000, WINDOW, "0.0.0.dev1+gbb737d7a8", "prefill");
      for (boolean allowUnknown : List.of(false, true)) {
        PoolVerdict refused = judge(sglang(null, allowUnknown, true), dev);
        assertThat(refused.verdict()).isEqualTo(Verdict.Refused);
        assertThat(refused.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
        assertThat(refused.message())
            .startsWith(
                "engine version 0.0.0.dev1+gbb737d7a8 (not a release version) in disaggregation"
                    + " mode prefill: it cannot be shown to be at or after release 0.5.22");
      }
    }

    @Test
    void aDevBuildIsRefusedAsUnknownByAVerifiedAdvisoryUnlessAllowed() {
      List<EngineAdvisories.Advisory> verified =
          List.of(
              new EngineAdvisories.Advisory(
                  "sglang",
                  EngineVersion.release("0.5.22"),
                  EngineAdvisories.Disaggregation.PREFILL_OR_DECODE,
                  GateReason.KnownUnsafeEngine,
                  "x"));
      PoolObservation dev = seen(2_040_000, WINDOW, "0.0.0.dev1+gbb737d7a8", "prefill");
      PoolVerdict refused =
          judge(
              new PoolPolicy(
                  WINDOW,
                  1.0,
                  false,
                  new VersionRules("sglang", Optional.empty(), false, verified)),
              dev);
      assertThat(refused.verdict()).isEqualTo(Verdict.Refused);
      assertThat(refused.reason()).isEqualTo(GateReason.EngineVersionUnknown);
      assertThat(refused.message())
          .isEqualTo(
              "engine version 0.0.0.dev1+gbb737d7a8 is not a release version, so it"
                  + " cannot be checked against the advisory for sglang before 0.5.22 in disaggregation mode prefill;"
                  + " set allowUnknownVersions: true on the role to accept it");

      PoolVerdict allowed =
          judge(
              new PoolPolicy(
                  WINDOW, 1.0, false, new VersionRules("sglang", Optional.empty(), true, verified)),
              dev);
      assertThat(allowed.reason()).isEqualTo(GateReason.PoolSufficient);
      assertThat(allowed.message())
          .endsWith(
              ", engine version 0.0.0.dev1+gbb737d7a8 is not a release version"
                  + " (allowed by allowUnknownVersions; not checked against the advisory for sglang before 0.5.22"
                  + " in disaggregation mode prefill)");
    }

    @Test
    void aDevBuildServingUnifiedNeedsNoVersionAndIsReportedAsSuch() {
      PoolVerdict verdict =
          judge(sglang(null, false, true), seen(2_040_000, WINDOW, "0.0.0.dev1+gbb737d7a8", null));
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
      assertThat(verdict.message())
          .endsWith(", engine version 0.0.0.dev1+gbb737d7a8 (not a release version)");
    }

    @Test
    void anAbsentVersionCannotClearAnAdvisory() {
      PoolVerdict verdict =
          judge(sglang(null, false, true), seen(2_040_000, WINDOW, null, "decode"));
      assertThat(verdict.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
      assertThat(verdict.message())
          .startsWith(
              "engine reports no version in disaggregation mode decode: it cannot be shown to be at"
                  + " or after release 0.5.22");
    }

    @Test
    void everyBuiltInAdvisoryNamesARealEngine() {
      List<String> engines = Arrays.stream(Engine.values()).map(Engine::wireName).toList();
      assertThat(EngineAdvisories.BUILT_IN)
          .isNotEmpty()
          .allSatisfy(
              a -> {
                assertThat(engines).contains(a.engine());
                // A refusing advisory names a release; one that only warns says why no fixed
                // release is verified.
                if (a.refuses()) {
                  assertThat(a.fixedIn())
                      .hasValueSatisfying(v -> assertThat(v.isRelease()).isTrue());
                } else {
                  assertThat(((EngineAdvisories.Fix.Unverified) a.fix()).status()).isNotBlank();
                }
              });
    }

    @Test
    void everyBuiltInAdvisoryIsListedWithItsSourcesInTheEngineReference()
        throws java.io.IOException {
      String engines = java.nio.file.Files.readString(java.nio.file.Path.of("../docs/engines.md"));
      String advisories = engines.substring(engines.indexOf("## Advisories"));
      assertThat(EngineAdvisories.BUILT_IN)
          .allSatisfy(
              a ->
                  assertThat(advisories)
                      .as("docs/engines.md Advisories lists %s", a.id())
                      .contains("`" + a.id() + "`"));
      assertThat(EngineAdvisories.BUILT_IN)
          .extracting(a -> a.id() + "/" + a.engine())
          .doesNotHaveDuplicates();
    }
  }

  @Nested
  class MinimumVersion {
    @Test
    void anOlderReleaseIsTooOld() {
      PoolPolicy policy =
          new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("tgi", "2.3.1", false, true));
      PoolVerdict verdict = judge(policy, seen(2_040_000, WINDOW, "2.2.0", null));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
      assertThat(verdict.reason()).isEqualTo(GateReason.EngineVersionTooOld);
      assertThat(verdict.message()).isEqualTo("engine version 2.2.0 < minEngineVersion 2.3.1");
      assertThat(judge(policy, seen(2_040_000, WINDOW, "3.0.1", null)).reason())
          .isEqualTo(GateReason.PoolSufficient);
      assertThat(judge(policy, seen(2_040_000, WINDOW, "2.3.1", null)).reason())
          .isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void aBuildIdCannotMeetAMinimumUnlessUnknownVersionsAreAllowed() {
      PoolObservation llama = seen(WINDOW, WINDOW, "b4567-abc", null);
      PoolVerdict refused =
          judge(
              new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("llamacpp", "1.0", false, true)),
              llama);
      assertThat(refused.reason()).isEqualTo(GateReason.EngineVersionUnknown);
      assertThat(refused.message()).contains("cannot be checked against minEngineVersion 1.0");
      assertThat(
              judge(
                      new PoolPolicy(
                          WINDOW, 1.0, false, VersionRules.of("llamacpp", "1.0", true, true)),
                      llama)
                  .reason())
          .isEqualTo(GateReason.PoolSufficient);
    }

    @Test
    void aMinimumThatIsNotAReleaseRefusesEveryPod() {
      PoolPolicy policy =
          new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("vllm", "latest", true, true));
      PoolVerdict verdict = judge(policy, seen(2_040_000, WINDOW, "0.11.0", null));
      assertThat(verdict.reason()).isEqualTo(GateReason.EngineVersionTooOld);
      assertThat(verdict.message()).contains("spec minEngineVersion is not a release version");
    }
  }

  @Nested
  class ContextLengthOnly {
    private final PoolPolicy policy =
        new PoolPolicy(131_072, 1.0, false, VersionRules.of("ollama", null, false, true));

    @Test
    void aLongEnoughContextIsVerifiedAndTheVerdictSaysNoPoolWasMeasured() {
      PoolVerdict verdict =
          judge(policy, PoolObservation.contextLengthOnly(131_072, "0.9.7", List.of()));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Verified);
      assertThat(verdict.reason()).isEqualTo(GateReason.ContextLengthSufficient);
      assertThat(verdict.message())
          .isEqualTo(
              "engine exposes no KV pool: its context length 131072 tokens, used as"
                  + " the bound, >= context window 131072 × 1.0, engine version 0.9.7");
    }

    @Test
    void aShortContextIsRefusedAsEngineContextTooShort() {
      PoolVerdict verdict =
          judge(policy, PoolObservation.contextLengthOnly(8192, "0.9.7", List.of()));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Refused);
      assertThat(verdict.reason()).isEqualTo(GateReason.EngineContextTooShort);
      assertThat(verdict.message())
          .isEqualTo(
              "engine exposes no KV pool: its context length 8192 tokens, used as"
                  + " the bound, < context window 131072 × 1.0");
    }

    @Test
    void theHeadroomRatioAppliesToTheBound() {
      PoolPolicy headroom = new PoolPolicy(131_072, 1.5, false);
      assertThat(
              judge(headroom, PoolObservation.contextLengthOnly(131_072, null, List.of())).reason())
          .isEqualTo(GateReason.EngineContextTooShort);
    }

    @Test
    void theBoundMustBeTheContextLength() {
      assertThatThrownBy(
              () ->
                  new PoolObservation(
                      10,
                      OptionalLong.of(9),
                      null,
                      null,
                      List.of(),
                      PoolObservation.PoolSource.CONTEXT_LENGTH_ONLY,
                      null))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  /**
   * A figure that is only an upper bound of the GPU pool (summed, host-inclusive, a hybrid's block
   * product).
   */
  @Nested
  class UpperBound {
    private static final String CAVEAT = "host offload and several windows are counted";

    private PoolObservation bound(
        long tokens, OptionalLong context, PoolObservation.PoolSource kind) {
      return PoolObservation.upperBound(tokens, context, null, null, List.of(), kind, CAVEAT);
    }

    private PoolVerdict judge(PoolPolicy policy, PoolObservation seen) {
      return PoolJudge.judge(policy, ProbeOutcome.observed(seen));
    }

    @Test
    void aBoundThatHoldsTheWindowVerifiesNothing() {
      PoolVerdict verdict =
          judge(
              new PoolPolicy(131_072, 1.0, false),
              bound(1_000_000, OptionalLong.empty(), PoolObservation.PoolSource.UPPER_BOUND));
      assertThat(verdict.verdict()).isEqualTo(Verdict.Unknown);
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
      assertThat(verdict.message())
          .isEqualTo(
              "KV figure 1000000 tokens is only an upper bound of the GPU pool ("
                  + CAVEAT
                  + "), so it cannot show the pool holds context window 131072 × 1.0");
    }

    @Test
    void aBoundBelowTheRequirementRefusesThePod() {
      PoolVerdict verdict =
          judge(
              new PoolPolicy(131_072, 2.0, false),
              bound(200_000, OptionalLong.empty(), PoolObservation.PoolSource.UPPER_BOUND));
      assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
      assertThat(verdict.message())
          .isEqualTo(
              "KV pool at most 200000 tokens (an upper bound) < context window 131072 × 2.0");
    }

    @Test
    void theDeclarationMakesItThePoolUnlessTheAnswerShowsOtherwise() {
      PoolPolicy declared = new PoolPolicy(131_072, 1.0, false, VersionRules.NONE, true);
      assertThat(
              judge(
                      declared,
                      bound(200_000, OptionalLong.empty(), PoolObservation.PoolSource.UPPER_BOUND))
                  .reason())
          .isEqualTo(GateReason.PoolSufficient);
      PoolVerdict shown =
          judge(
              declared,
              bound(200_000, OptionalLong.empty(), PoolObservation.PoolSource.UPPER_BOUND_SHOWN));
      assertThat(shown.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
      assertThat(shown.message())
          .endsWith(
              "the role declares blockCountIsPool, but the engine's own answer shows the"
                  + " figure is more than its GPU pool");
    }

    @Test
    void aContextTheEngineGuaranteesItsPoolHoldsVerifiesOnlyWhenItMeetsTheRatio() {
      PoolObservation held =
          bound(
              262_144,
              OptionalLong.of(131_072),
              PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD);
      PoolVerdict atOne = judge(new PoolPolicy(131_072, 1.0, false), held);
      assertThat(atOne.verdict()).isEqualTo(Verdict.Verified);
      assertThat(atOne.reason()).isEqualTo(GateReason.ContextLengthSufficient);
      PoolVerdict headroom = judge(new PoolPolicy(131_072, 1.5, false), held);
      assertThat(headroom.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
      assertThat(headroom.message())
          .endsWith(
              "the engine context 131072 tokens, which the engine guarantees its pool"
                  + " holds, is below context window 131072 × 1.5");
    }

    @Test
    void aRefusalOfTheRejectionProbeDoesNotTurnAContextBoundIntoAMeasuredPool() {
      PoolVerdict held =
          judge(
              new PoolPolicy(131_072, 1.0, false),
              bound(
                  262_144,
                  OptionalLong.of(131_072),
                  PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD));
      PoolVerdict refused =
          RejectionJudge.judge(held, new RejectionOutcome.Refused(400, "BadRequestError", 131_136));
      assertThat(refused.verdict()).isEqualTo(Verdict.Verified);
      assertThat(refused.reason()).isEqualTo(GateReason.ContextLengthSufficient);
    }

    @Test
    void aBoundNeedsItsCaveatAndOnlyABoundHasOne() {
      assertThatThrownBy(
              () ->
                  new PoolObservation(
                      10,
                      OptionalLong.empty(),
                      null,
                      null,
                      List.of(),
                      PoolObservation.PoolSource.UPPER_BOUND,
                      null))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(
              () ->
                  new PoolObservation(
                      10,
                      OptionalLong.empty(),
                      null,
                      null,
                      List.of(),
                      PoolObservation.PoolSource.ENGINE_KV_POOL,
                      "why"))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(
              () ->
                  PoolObservation.upperBound(
                      10,
                      OptionalLong.empty(),
                      null,
                      null,
                      List.of(),
                      PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD,
                      "why"))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}

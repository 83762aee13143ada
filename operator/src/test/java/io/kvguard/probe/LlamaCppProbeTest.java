package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.VersionRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LlamaCppProbeTest {
  private static final long WINDOW = 32_768;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new LlamaCppProbe(fake.http));
    }
  }

  @Test
  void thePerSlotContextIsThePoolAndTheEngineContext() {
    ProbeOutcome outcome = probe(EngineShapes.llamacpp(WINDOW, 4, "b5500-0d4a1c2"));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(WINDOW);
    assertThat(seen.engineContextTokens()).hasValue(WINDOW);
    assertThat(seen.engineVersion()).isEqualTo("b5500-0d4a1c2");
    assertThat(seen.notes())
        .containsExactly(
            "pool = n_ctx of one slot (32768 tokens): the longest prompt the server"
                + " admits and the most KV one request can use",
            "total_slots 4: /props does not say whether the slots share"
                + " one unified KV cache of n_ctx tokens (llama.cpp's default since October 2025 when --parallel is not given;"
                + " concurrent requests then compete for it) or each hold their own");
    // Since PR #16736 four slots share one unified cache and each slot's n_ctx is all of it: n_ctx
    // x total_slots (131072 here) would overstate it four times, and /props cannot tell the two
    // layouts apart.
    assertThat(String.join(" ", seen.notes())).doesNotContain("131072");
    PoolVerdict verdict = judge(Engine.LLAMACPP, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(verdict.message())
        .endsWith(", engine version b5500-0d4a1c2 (not a release version)");
  }

  @Test
  void the2024ShapeWithoutBuildInfoIsReadToo() {
    PoolObservation seen = observed(probe(EngineShapes.llamacppLegacy(65_536, 1)));
    assertThat(seen.poolTokens()).isEqualTo(65_536);
    assertThat(seen.engineVersion()).isNull();
  }

  @Test
  void aSlotSmallerThanTheWindowIsRefusedEvenWhenAllSlotsTogetherHoldIt() {
    PoolVerdict verdict =
        judge(Engine.LLAMACPP, WINDOW, probe(EngineShapes.llamacpp(8192, 8, "b5500-0d4a1c2")));
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message())
        .contains("KV pool 8192 tokens < context window 32768")
        .contains("engine context 8192 tokens < context window 32768");
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    assertThat(failure(probe(Map.of("/props", Answer.json("{\"total_slots\":4}")))))
        .isEqualTo("/props has no default_generation_settings object");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/props",
                        Answer.json("{\"default_generation_settings\":{\"n_predict\":-1}}")))))
        .isEqualTo("/props reports no default_generation_settings.n_ctx");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/props",
                        Answer.json("{\"default_generation_settings\":{\"n_ctx\":\"4096\"}}")))))
        .isEqualTo("/props default_generation_settings.n_ctx is not a number (string)");
    assertThat(failure(probe(Map.of()))).isEqualTo("GET /props answered HTTP 404");
  }

  @Test
  void aBuildIdIsAnUnknownVersionForMinEngineVersion() {
    PoolPolicy policy =
        new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("llamacpp", "1.0", false, true));
    assertThat(judge(policy, probe(EngineShapes.llamacpp(WINDOW, 1, "b4567-abc"))).reason())
        .isEqualTo(GateReason.EngineVersionUnknown);
  }

  /** What upstream llama-server d14ce3dab answered (recorded; see the folder's SOURCE.md). */
  private static ProbeOutcome recorded(String props) {
    return probe(Map.of("/props", EngineFixtures.answer("llamacpp-d14ce3d/" + props)));
  }

  @Test
  void aRecordedServerWithOneSlotOfTheWindowIsVerifiedWithAnUnknownVersion() {
    ProbeOutcome outcome = recorded("props-np1-200.http");
    assertThat(observed(outcome).poolTokens()).isEqualTo(8192);
    PoolVerdict verdict = judge(Engine.LLAMACPP, 8192, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    // A build without git metadata reports "b0-unknown": no version a rule could compare.
    assertThat(verdict.message()).endsWith(", engine version b0-unknown (not a release version)");
  }

  @Test
  void aRecordedServerWithFourSplitSlotsIsRefusedAndWithAUnifiedCacheIsVerified() {
    assertThat(judge(Engine.LLAMACPP, 8192, recorded("props-np4-200.http")).message())
        .contains("KV pool 2048 tokens < context window 8192");
    assertThat(judge(Engine.LLAMACPP, 8192, recorded("props-np4-kvu-200.http")).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void theRecordedAutoParallelServerCountsOneSlotNeverFour() {
    PoolObservation seen = observed(recorded("props-auto-200.http"));
    assertThat(seen.poolTokens()).isEqualTo(8192);
    assertThat(seen.notes()).anySatisfy(note -> assertThat(note).startsWith("total_slots 4:"));
    assertThat(String.join(" ", seen.notes())).doesNotContain("32768");
  }

  @Test
  void aRecordedServerBehindAnApiKeyIsAFailedProbe() {
    assertThat(failure(recorded("props-api-key-401.http"))).contains("HTTP 401");
  }
}

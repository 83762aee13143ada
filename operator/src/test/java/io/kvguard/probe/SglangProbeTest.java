package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import io.kvguard.verdict.VersionRules;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SglangProbeTest {
  private static final long WINDOW = 1_048_576;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new SglangProbe(fake.http));
    }
  }

  @Test
  void serverInfoGivesTheSmallestRankPool() {
    ProbeOutcome outcome =
        probe(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_100_000, 2_040_000));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(2_040_000);
    assertThat(seen.disaggregationMode()).isEqualTo("prefill");
    assertThat(seen.notes()).contains("pool is the smallest of 2 data-parallel ranks");
    // The pool alone, without the version rules (ClaimedFixTest judges a prefill 0.5.22).
    assertThat(judge(new PoolPolicy(WINDOW, 1.0, false), outcome).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void olderBuildsAnswerOnlyGetServerInfoWithRankZeroOnly() {
    ProbeOutcome outcome = probe(EngineShapes.sglangLegacy(WINDOW, 2_040_000, "0.4.9"));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(2_040_000);
    assertThat(seen.notes())
        .contains(
            "pool from max_total_num_tokens: rank 0 only, other data-parallel ranks unverified");
    assertThat(judge(Engine.SGLANG, WINDOW, outcome).verdict()).isEqualTo(Verdict.Verified);
  }

  @Test
  void theIncidentPrefillPoolIsRefusedInEitherShape() {
    assertThat(
            judge(
                    Engine.SGLANG,
                    WINDOW,
                    probe(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280, 681_280)))
                .reason())
        .isEqualTo(GateReason.PoolTooSmall);
    assertThat(
            judge(Engine.SGLANG, WINDOW, probe(EngineShapes.sglangLegacy(WINDOW, 681_280, "0.4.9")))
                .reason())
        .isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    Map<String, Answer> halfRanks =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    halfRanks.put(
        "/server_info",
        Answer.json(
            "{\"dp_size\":2,\"internal_states\":[{\"memory_usage\":"
                + "{\"token_capacity\":2040000}},{\"memory_usage\":{}}],\"api_key\":\""
                + EngineShapes.SECRET_API_KEY
                + "\"}"));
    assertThat(failure(probe(halfRanks)))
        .isEqualTo("only 1 of 2 internal_states ranks report memory_usage.token_capacity");
    Map<String, Answer> none =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    none.put(
        "/server_info",
        Answer.json("{\"dp_size\":1,\"api_key\":\"" + EngineShapes.SECRET_API_KEY + "\"}"));
    assertThat(failure(probe(none)))
        .isEqualTo(
            "server_info reports no internal_states[].memory_usage.token_capacity"
                + " and no max_total_num_tokens");
    Map<String, Answer> noRanks =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    noRanks.put("/server_info", Answer.json("{\"max_total_num_tokens\":2040000}"));
    assertThat(failure(probe(noRanks))).contains("dp_size");
  }

  @Test
  void theVersionPolicyRefuses0521InPrefillAndClearsNeither0522NorADevBuildThere() {
    PoolPolicy defaults =
        new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("sglang", null, false, true));
    PoolVerdict flawed =
        judge(defaults, probe(EngineShapes.sglang(WINDOW, "prefill", "0.5.21", 2_040_000)));
    assertThat(flawed.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
    assertThat(flawed.message()).contains("to_finish").contains("finished_reason");
    PoolVerdict claimed =
        judge(defaults, probe(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_040_000)));
    assertThat(claimed.reason()).isEqualTo(GateReason.KnownUnsafeEngine);
    assertThat(claimed.message()).contains("post-mortem alone");
    ProbeOutcome dev =
        probe(EngineShapes.sglang(WINDOW, "decode", "0.0.0.dev1+gbb737d7a8", 2_040_000));
    assertThat(judge(defaults, dev).reason()).isEqualTo(GateReason.KnownUnsafeEngine);
    PoolPolicy allowing =
        new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("sglang", null, true, true));
    assertThat(judge(allowing, dev).reason()).isEqualTo(GateReason.KnownUnsafeEngine);
    // The same builds serving unified are accepted.
    assertThat(
            judge(defaults, probe(EngineShapes.sglang(WINDOW, null, "0.5.21", 2_040_000))).reason())
        .isEqualTo(GateReason.PoolSufficient);
  }
}

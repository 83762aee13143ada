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
import io.kvguard.verdict.PoolObservation.PoolSource;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import io.kvguard.verdict.VersionRules;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VllmProbeTest {
  private static final long WINDOW = 131_072;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new VllmProbe(fake.http));
    }
  }

  @Test
  void kvCacheSizeTokensGivesThePoolPerEngine() {
    ProbeOutcome outcome = probe(EngineShapes.vllm(WINDOW, 99_999, 16, 300_000L, 262_144L));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(262_144);
    assertThat(seen.engineVersion()).isEqualTo("0.11.0");
    // Series that differ are not what vLLM writes (one CacheConfig for all), so no per-engine
    // minimum is claimed.
    assertThat(seen.notes())
        .contains(
            "the 2 engines' series carry different kv_cache_size_tokens; the smallest counts");
    assertThat(judge(Engine.VLLM, WINDOW, outcome).reason()).isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void withDataParallelismKvCacheSizeTokensIsTheFirstEnginesFigureCopiedOntoEverySeries() {
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics",
                EngineFixtures.answer("vllm-002f10e/metrics-dp2-200.http"),
                "/v1/models",
                EngineFixtures.answer("vllm-002f10e/models-200.http")));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(262_144);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.ENGINE_KV_POOL);
    assertThat(seen.notes())
        .contains(
            "kv_cache_size_tokens of data-parallel engine 0 only: vLLM writes the first"
                + " engine's value onto all 2 engines' series, so the other engines' pools are not reported")
        .noneMatch(note -> note.contains("smallest"));
  }

  @Test
  void buildsWithoutKvCacheSizeTokensGiveAnUpperBoundThatOnlyTheContextLengthCanVerify() {
    ProbeOutcome outcome = probe(EngineShapes.vllm(WINDOW, 16_384, 16));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(262_144);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.UPPER_BOUND_CONTEXT_HELD);
    assertThat(seen.notes())
        .contains(
            "pool = num_gpu_blocks × block_size (this vLLM build exports no"
                + " kv_cache_size_tokens): an upper bound for hybrid models");
    PoolVerdict verdict = judge(Engine.VLLM, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.ContextLengthSufficient);
    assertThat(verdict.message())
        .startsWith(
            "engine context 131072 tokens >= context window 131072 × 1.0, and the engine"
                + " refuses to start unless one request of its context length fits its KV cache");
  }

  @Test
  void aHybridModelsBlockProductNeverVerifiesAHeadroomRatioAboveOne() {
    // gpt-oss on a build without kv_cache_size_tokens: 16384 × 16 = 262144 tokens, twice the real
    // pool.
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics",
                EngineFixtures.answer("vllm-005a810/metrics-hybrid-200.http"),
                "/v1/models",
                EngineFixtures.answer("vllm-005a810/models-200.http")));
    PoolPolicy headroom =
        new PoolPolicy(WINDOW, 1.5, false, VersionRules.of("vllm", null, false, true));
    PoolVerdict verdict = Probing.judge(headroom, outcome);
    assertThat(verdict.verdict()).isEqualTo(Verdict.Unknown);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(verdict.message())
        .startsWith(
            "KV figure 262144 tokens is only an upper bound of the GPU pool (this vLLM"
                + " build exports no kv_cache_size_tokens")
        .contains(
            "declare blockCountIsPool: true on the role",
            "the engine context 131072 tokens, which the engine guarantees its pool holds, is below context window"
                + " 131072 × 1.5");
    PoolPolicy declared =
        new PoolPolicy(WINDOW, 1.5, false, VersionRules.of("vllm", null, false, true), true);
    assertThat(Probing.judge(declared, outcome).reason()).isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void disableLogStatsIsNamedWhenTheMetricsPageHasNoVllmSeries() {
    String cause =
        failure(
            probe(
                Map.of(
                    "/metrics",
                    EngineFixtures.answer("vllm-005a810/metrics-disable-log-stats-200.http"),
                    "/v1/models",
                    EngineFixtures.answer("vllm-005a810/models-200.http"))));
    assertThat(cause)
        .isEqualTo(
            "/metrics has no vllm:cache_config_info series and no other vllm: series: the engine"
                + " runs with --disable-log-stats, which skips vLLM's stat loggers, so it never exports its KV cache size;"
                + " remove --disable-log-stats from the engine's arguments");
  }

  @Test
  void aPoolSmallerThanTheWindowIsRefusedInEitherShape() {
    assertThat(judge(Engine.VLLM, WINDOW, probe(EngineShapes.vllm(WINDOW, 4096, 16))).reason())
        .isEqualTo(GateReason.PoolTooSmall);
    assertThat(
            judge(Engine.VLLM, WINDOW, probe(EngineShapes.vllm(WINDOW, 99_999, 16, 65_536L)))
                .reason())
        .isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    Map<String, Answer> noConfig = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    noConfig.put("/metrics", Answer.prometheus("vllm:num_requests_running{engine=\"0\"} 0.0\n"));
    assertThat(failure(probe(noConfig)))
        .isEqualTo(
            "/metrics has no vllm:cache_config_info series, though it has other"
                + " vllm: series: this vLLM build or its stat-logger setup does not export the cache config, so the pool cannot"
                + " be read");
    Map<String, Answer> badLabel = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    badLabel.put(
        "/metrics",
        Answer.prometheus(
            "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1.0\n"));
    assertThat(failure(probe(badLabel)))
        .isEqualTo("vllm:cache_config_info num_gpu_blocks is not a positive whole number");
    Map<String, Answer> summed = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    summed.put(
        "/metrics",
        Answer.prometheus(
            "vllm:cache_config_info{block_size=\"16\",engine=\"0\",num_gpu_blocks=\"9\"} 1\n"
                + "vllm:cache_config_info{block_size=\"16\",engine=\"1\",num_gpu_blocks=\"9\"} 1\n"));
    assertThat(failure(probe(summed)))
        .contains("lacks kv_cache_size_tokens and lists 2 data-parallel engines");
  }
}

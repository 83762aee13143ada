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

  /** EngineShapes' vLLM page with {@code --num-gpu-blocks-override} set to {@code blocks}. */
  private static Map<String, Answer> overridden(
      long numGpuBlocks, long blocks, Long... kvCacheSizeTokens) {
    Map<String, Answer> answers =
        new HashMap<>(EngineShapes.vllm(WINDOW, numGpuBlocks, 16, kvCacheSizeTokens));
    String page =
        new String(answers.get("/metrics").body(), java.nio.charset.StandardCharsets.UTF_8)
            .replace(
                "num_gpu_blocks_override=\"None\"", "num_gpu_blocks_override=\"" + blocks + "\"");
    answers.put("/metrics", Answer.prometheus(page));
    return answers;
  }

  /**
   * vLLM issue #27181 (before PR #41069): {@code --num_gpu_blocks_override=1} started an engine
   * with a 16-token pool for a 2,048-token context. Here 100 blocks × 16 = 1,600 tokens under a
   * 131,072-token max_model_len: the context length must not verify it.
   */
  @Test
  void anOverriddenBlockCountIsNotTakenAsHoldingTheContextLength() {
    ProbeOutcome tiny = probe(overridden(100, 100));
    assertThat(observed(tiny).poolSource()).isEqualTo(PoolSource.UPPER_BOUND);
    assertThat(observed(tiny).notes())
        .contains(
            "--num-gpu-blocks-override 100 sets the block count: max_model_len is no lower bound"
                + " of the pool (vLLM before PR #41069 did not check it against the override at"
                + " start-up)");
    PoolVerdict refused = judge(Engine.VLLM, WINDOW, tiny);
    assertThat(refused.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(refused.message()).startsWith("KV pool at most 1600 tokens (an upper bound)");

    PoolVerdict large = judge(Engine.VLLM, WINDOW, probe(overridden(16_384, 16_384)));
    assertThat(large.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(large.message()).contains("--num-gpu-blocks-override");
  }

  @Test
  void withKvCacheSizeTokensTheOverriddenPoolIsJudgedAsThePool() {
    ProbeOutcome outcome = probe(overridden(100, 100, 1_600L));
    assertThat(observed(outcome).poolSource()).isEqualTo(PoolSource.ENGINE_KV_POOL);
    assertThat(observed(outcome).poolTokens()).isEqualTo(1_600);
    PoolVerdict verdict = judge(Engine.VLLM, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message()).contains("engine context 131072 tokens > KV pool 1600 tokens");
  }

  @Test
  void aGarbageOverrideLabelFailsClosed() {
    Map<String, Answer> answers = overridden(16_384, 0);
    assertThat(failure(probe(answers))).contains("num_gpu_blocks_override");
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

package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolObservation.PoolSource;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import io.kvguard.verdict.VersionRules;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TrtllmProbeTest {
  private static final long WINDOW = 131_072;
  private static final String SERVE = "trtllm-serve-050f80d/";
  private static final String TRITON = "trtllm-triton-0.19.0/metrics-200.http";

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new TrtllmProbe(fake.http));
    }
  }

  private static PoolPolicy declared(long window, double ratio) {
    return new PoolPolicy(window, ratio, false, VersionRules.of("trtllm", null, false, true), true);
  }

  @Test
  void tritonBlockCountIsOnlyAnUpperBoundAndVerifiesNothingWithoutTheDeclaration() {
    ProbeOutcome outcome = probe(Map.of("/metrics", EngineFixtures.answer(TRITON)));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(3124L * 64);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.UPPER_BOUND);
    assertThat(seen.notes())
        .contains(
            "KV figure = nv_trt_llm_kv_cache_block_metrics max × tokens_per (Triton)",
            TrtllmProbe.ONE_RANK_NOTE,
            TrtllmProbe.NO_CONTEXT_NOTE);
    PoolVerdict verdict = judge(Engine.TRTLLM, WINDOW, outcome);
    assertThat(verdict.verdict()).isEqualTo(Verdict.Unknown);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(verdict.message())
        .startsWith("KV figure 199936 tokens is only an upper bound of the GPU pool (Triton's")
        .contains(
            "kv_cache_host_memory_bytes",
            "max_attention_window_size",
            "declare blockCountIsPool: true");
  }

  @Test
  void theRoleDeclarationLetsTheJudgeTakeTheBlockCountAsThePool() {
    PoolVerdict verdict =
        Probing.judge(
            declared(WINDOW, 1.0), probe(Map.of("/metrics", EngineFixtures.answer(TRITON))));
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(verdict.message())
        .startsWith("KV pool 199936 tokens >= context window 131072 × 1.0")
        .contains("taken as its GPU pool on the role's declaration blockCountIsPool");
  }

  @Test
  void anUpperBoundBelowTheWindowIsRefused() {
    PoolVerdict verdict =
        judge(Engine.TRTLLM, 1_048_576, probe(Map.of("/metrics", EngineFixtures.answer(TRITON))));
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message())
        .startsWith("KV pool at most 199936 tokens (an upper bound) < context window 1048576");
    assertThat(judge(Engine.TRTLLM, WINDOW, probe(EngineShapes.trtllmServe(4095, 32))).reason())
        .isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void iterationStatsOfOneWindowGiveTheGpuPoolWithoutTheHostOffloadBlocks() {
    // maxNumBlocks 8192 = 4000 GPU + 4192 host blocks: 262144 tokens would pass a 131072 window;
    // the GPU holds 128000.
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics",
                EngineFixtures.answer(SERVE + "metrics-one-window-host-offload-200.http")));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(128_000);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.ENGINE_KV_POOL);
    assertThat(seen.notes())
        .contains(
            "pool = kvCacheIterationStats[131072].primaryMaxNumBlocks × tokensPerBlock (GPU blocks only)",
            "host offload: 4192 secondary (host) blocks are not counted in the pool");
    PoolVerdict verdict = judge(Engine.TRTLLM, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message()).startsWith("KV pool 128000 tokens < context window 131072");
  }

  @Test
  void severalAttentionWindowsKeepTheGateShutEvenWhenTheRoleDeclaresOtherwise() {
    ProbeOutcome outcome =
        probe(Map.of("/metrics", EngineFixtures.answer(SERVE + "metrics-two-windows-200.http")));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.UPPER_BOUND_SHOWN);
    assertThat(seen.poolTokens()).isEqualTo(12_000L * 32);
    PoolVerdict undeclared = judge(Engine.TRTLLM, WINDOW, outcome);
    assertThat(undeclared.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(undeclared.message())
        .contains(
            "reports 2 attention-window pools (windows of 1024, 131072 tokens)",
            "kv_cache_config.max_attention_window");
    PoolVerdict declared = Probing.judge(declared(WINDOW, 1.0), outcome);
    assertThat(declared.verdict()).isEqualTo(Verdict.Unknown);
    assertThat(declared.reason()).isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(declared.message())
        .endsWith(
            "the role declares blockCountIsPool, but the engine's own answer shows the"
                + " figure is more than its GPU pool");
  }

  @Test
  void kvCacheStatsWithoutPerWindowCountsAreAnUpperBound() {
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics", EngineFixtures.answer(SERVE + "metrics-kvcachestats-only-200.http")));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(262_144);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.UPPER_BOUND);
    assertThat(judge(Engine.TRTLLM, WINDOW, outcome).message())
        .contains("kv_cache_config.host_cache_size");
  }

  @Test
  void idleTrtllmServeIsReadFromItsPrometheusGaugesWithTheConfiguredContext() {
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics",
                EngineFixtures.answer(SERVE + "metrics-idle-200.http"),
                "/prometheus/metrics",
                EngineFixtures.answer(SERVE + "prometheus-metrics-200.http")));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(8192L * 32);
    assertThat(seen.poolSource()).isEqualTo(PoolSource.UPPER_BOUND);
    assertThat(seen.engineContextTokens()).hasValue(131_072);
    assertThat(seen.notes())
        .contains(
            "KV figure = trtllm_kv_cache_max_blocks × trtllm_kv_cache_tokens_per_block"
                + " (trtllm-serve /prometheus/metrics)");
  }

  @Test
  void aConfiguredContextAboveTheUpperBoundIsRefused() {
    ProbeOutcome outcome =
        probe(
            Map.of(
                "/metrics",
                EngineFixtures.answer(SERVE + "metrics-kvcachestats-only-200.http"),
                "/prometheus/metrics",
                EngineFixtures.answer(SERVE + "prometheus-metrics-before-first-request-200.http")));
    // 131072-token context read from trtllm_model_config_info; halve the blocks so the bound falls
    // below it.
    Answer stats = EngineFixtures.answer(SERVE + "metrics-kvcachestats-only-200.http");
    ProbeOutcome small =
        probe(
            Map.of(
                "/metrics",
                Answer.json(
                    new String(stats.body(), StandardCharsets.UTF_8)
                        .replace("\"maxNumBlocks\":8192", "\"maxNumBlocks\":2048")),
                "/prometheus/metrics",
                EngineFixtures.answer(SERVE + "prometheus-metrics-before-first-request-200.http")));
    assertThat(observed(outcome).engineContextTokens()).hasValue(131_072);
    PoolVerdict verdict = judge(Engine.TRTLLM, 65_536, small);
    assertThat(verdict.reason()).isEqualTo(GateReason.EngineContextExceedsPool);
    assertThat(verdict.message())
        .contains("engine context 131072 tokens > KV pool at most 65536 tokens");
  }

  @Test
  void whenNeitherSourceAnswersTheMessageSaysWhatToTurnOn() {
    String idle =
        failure(
            probe(
                Map.of(
                    "/metrics",
                    EngineFixtures.answer(SERVE + "metrics-idle-200.http"),
                    "/prometheus/metrics",
                    EngineFixtures.answer(SERVE + "prometheus-metrics-404.http"))));
    assertThat(idle)
        .startsWith(
            "TensorRT-LLM answered no KV figures: GET /metrics lists no iteration stats with"
                + " kvCacheStats, and GET /prometheus/metrics answered HTTP 404 (mounted only with return_perf_metrics)")
        .contains(
            "enable_iter_perf_stats",
            "return_perf_metrics",
            "readinessProbe on /health_generate",
            "metricsPort");
    String beforeFirstRequest =
        failure(
            probe(
                Map.of(
                    "/metrics",
                    EngineFixtures.answer(SERVE + "metrics-idle-200.http"),
                    "/prometheus/metrics",
                    EngineFixtures.answer(
                        SERVE + "prometheus-metrics-before-first-request-200.http"))));
    assertThat(beforeFirstRequest)
        .contains("GET /prometheus/metrics has no trtllm_kv_cache_max_blocks yet");
    assertThat(failure(probe(Map.of()))).contains("GET /metrics answered HTTP 404");
  }

  @Test
  void tritonIsReadOnTheRolesMetricsPortNotTheInferencePort() throws IOException {
    try (FakeEngine inference =
            new FakeEngine().serve(Map.of("/v2/health/ready", Answer.json("{}")));
        FakeEngine metrics =
            new FakeEngine().serve(Map.of("/metrics", EngineFixtures.answer(TRITON)))) {
      TrtllmProbe probe = new TrtllmProbe(EngineHttp.createDefault());
      EngineEndpoint port =
          EngineEndpoint.of("http", "127.0.0.1", inference.port(), Duration.ofSeconds(5));
      assertThat(failure(probe.probe(port))).contains("GET /metrics answered HTTP 404");
      PoolObservation seen = observed(probe.probe(port.withMetricsPort(metrics.port())));
      assertThat(seen.poolTokens()).isEqualTo(199_936);
    }
  }

  @Test
  void twoModelsOnOneTritonCountTheSmallerFigure() {
    String metrics =
        "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"a\",version=\"1\"} 100\n"
            + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\",model=\"a\",version=\"1\"} 64\n"
            + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"b\",version=\"1\"} 50\n"
            + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\",model=\"b\",version=\"1\"} 64\n";
    PoolObservation seen = observed(probe(Map.of("/metrics", Answer.prometheus(metrics))));
    assertThat(seen.poolTokens()).isEqualTo(3200);
    assertThat(seen.notes()).contains("KV figure is the smallest of 2 exported KV capacities");
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics",
                        Answer.prometheus(
                            "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"m\",version=\"1\"} 6239\n")))))
        .isEqualTo(
            "/metrics has no nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\"} series");
    assertThat(
            failure(
                probe(Map.of("/metrics", Answer.prometheus("nv_inference_request_success 3\n")))))
        .isEqualTo(
            "/metrics has neither nv_trt_llm_kv_cache_block_metrics (Triton) nor trtllm_kv_cache_max_blocks"
                + " and trtllm_kv_cache_tokens_per_block (trtllm-serve)");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics",
                        Answer.prometheus(
                            "trtllm_kv_cache_max_blocks{rank=\"0\"} 10\n"
                                + "trtllm_kv_cache_tokens_per_block{rank=\"1\"} 32\n")))))
        .contains("do not pair up by labels");
    assertThat(failure(probe(Map.of("/metrics", Answer.json("[]")))))
        .contains("GET /metrics lists no iteration stats with kvCacheStats");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics", Answer.json("[{\"kvCacheStats\":{\"maxNumBlocks\":6239}}]")))))
        .isEqualTo("/metrics[0].kvCacheStats lacks tokensPerBlock");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics",
                        Answer.prometheus(
                            "trtllm_kv_cache_max_blocks 9223372036854775807\ntrtllm_kv_cache_tokens_per_block 64\n")))))
        .isEqualTo("/metrics trtllm_kv_cache_max_blocks is too large to be exact");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics",
                        Answer.json(
                            "[{\"kvCacheStats\":{\"maxNumBlocks\":64,\"tokensPerBlock\":32},"
                                + "\"kvCacheIterationStats\":{\"4096\":{\"secondaryMaxNumBlocks\":0}}}]")))))
        .isEqualTo("/metrics[0].kvCacheIterationStats[4096] lacks primaryMaxNumBlocks");
    assertThat(
            failure(
                probe(
                    Map.of(
                        "/metrics",
                        Answer.json(
                            "[{\"kvCacheStats\":{\"maxNumBlocks\":64,\"tokensPerBlock\":32},"
                                + "\"kvCacheIterationStats\":{\"all\":{\"primaryMaxNumBlocks\":64}}}]")))))
        .isEqualTo("/metrics[0].kvCacheIterationStats has a window key that is not a token count");
  }
}

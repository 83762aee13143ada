package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.demo.EngineShapes;
import io.kvguard.demo.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TrtllmProbeTest {
  private static final long WINDOW = 131_072;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new TrtllmProbe(fake.http));
    }
  }

  @Test
  void tritonPoolIsMaxBlocksTimesTokensPerBlockAndOneRankIsFlagged() {
    ProbeOutcome outcome = probe(EngineShapes.tritonTrtllm(6239, 64));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(399_296);
    assertThat(seen.engineContextTokens()).isEmpty();
    assertThat(seen.notes()).contains("pool = nv_trt_llm_kv_cache_block_metrics max × tokens_per (Triton)",
        TrtllmProbe.ONE_RANK_NOTE, "TensorRT-LLM exports no context length: EngineContextExceedsPool is not checked");
    PoolVerdict verdict = judge(Engine.TRTLLM, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(verdict.message()).contains("engine reports no context length");
  }

  @Test
  void trtllmServeGaugesAndIterationStatsGiveThePool() {
    assertThat(observed(probe(EngineShapes.trtllmServe(4096, 32))).poolTokens()).isEqualTo(131_072);
    PoolObservation stats = observed(probe(EngineShapes.trtllmServeIterationStats(6239, 64)));
    assertThat(stats.poolTokens()).isEqualTo(399_296);
    assertThat(stats.notes()).contains("pool = kvCacheStats.maxNumBlocks × tokensPerBlock from trtllm-serve iteration stats",
        TrtllmProbe.ONE_RANK_NOTE);
  }

  @Test
  void aPoolSmallerThanTheWindowIsRefused() {
    PoolVerdict verdict = judge(Engine.TRTLLM, 1_048_576, probe(EngineShapes.tritonTrtllm(6239, 64)));
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message()).startsWith("KV pool 399296 tokens < context window 1048576");
    assertThat(judge(Engine.TRTLLM, WINDOW, probe(EngineShapes.trtllmServe(4095, 32))).reason())
        .isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void twoModelsOnOneTritonCountTheSmallerPool() {
    String metrics = "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"a\",version=\"1\"} 100\n"
        + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\",model=\"a\",version=\"1\"} 64\n"
        + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"b\",version=\"1\"} 50\n"
        + "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\",model=\"b\",version=\"1\"} 64\n";
    PoolObservation seen = observed(probe(Map.of("/metrics", Answer.prometheus(metrics))));
    assertThat(seen.poolTokens()).isEqualTo(3200);
    assertThat(seen.notes()).contains("pool is the smallest of 2 exported KV capacities");
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    assertThat(failure(probe(Map.of("/metrics", Answer.prometheus(
        "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"max\",model=\"m\",version=\"1\"} 6239\n")))))
        .isEqualTo("/metrics has no nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\"} series");
    assertThat(failure(probe(Map.of("/metrics", Answer.prometheus("nv_inference_request_success 3\n")))))
        .isEqualTo("/metrics has neither nv_trt_llm_kv_cache_block_metrics (Triton) nor trtllm_kv_cache_max_blocks"
            + " and trtllm_kv_cache_tokens_per_block (trtllm-serve)");
    assertThat(failure(probe(Map.of("/metrics", Answer.prometheus("trtllm_kv_cache_max_blocks{rank=\"0\"} 10\n"
        + "trtllm_kv_cache_tokens_per_block{rank=\"1\"} 32\n")))))
        .contains("do not pair up by labels");
    assertThat(failure(probe(Map.of("/metrics", Answer.json("[]")))))
        .startsWith("/metrics lists no iteration stats with kvCacheStats");
    assertThat(failure(probe(Map.of("/metrics", Answer.json("[{\"kvCacheStats\":{\"maxNumBlocks\":6239}}]")))))
        .isEqualTo("/metrics[0].kvCacheStats lacks tokensPerBlock");
    assertThat(failure(probe(Map.of("/metrics", Answer.prometheus(
        "trtllm_kv_cache_max_blocks 9223372036854775807\ntrtllm_kv_cache_tokens_per_block 64\n")))))
        .isEqualTo("/metrics trtllm_kv_cache_max_blocks is too large to be exact");
  }
}

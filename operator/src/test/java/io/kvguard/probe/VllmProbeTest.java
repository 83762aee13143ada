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
import io.kvguard.verdict.ProbeOutcome;
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
    assertThat(seen.notes()).contains("pool is the smallest of 2 data-parallel engines");
    assertThat(judge(Engine.VLLM, WINDOW, outcome).reason()).isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void buildsWithoutKvCacheSizeTokensUseBlocksTimesBlockSize() {
    ProbeOutcome outcome = probe(EngineShapes.vllm(WINDOW, 16_384, 16));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(262_144);
    assertThat(seen.notes()).contains("pool = num_gpu_blocks × block_size (this vLLM build exports no kv_cache_size_tokens)");
    assertThat(judge(Engine.VLLM, WINDOW, outcome).reason()).isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void aPoolSmallerThanTheWindowIsRefusedInEitherShape() {
    assertThat(judge(Engine.VLLM, WINDOW, probe(EngineShapes.vllm(WINDOW, 4096, 16))).reason())
        .isEqualTo(GateReason.PoolTooSmall);
    assertThat(judge(Engine.VLLM, WINDOW, probe(EngineShapes.vllm(WINDOW, 99_999, 16, 65_536L))).reason())
        .isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    Map<String, Answer> noConfig = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    noConfig.put("/metrics", Answer.prometheus("vllm:num_requests_running{engine=\"0\"} 0.0\n"));
    assertThat(failure(probe(noConfig))).isEqualTo("/metrics has no vllm:cache_config_info series");
    Map<String, Answer> badLabel = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    badLabel.put("/metrics", Answer.prometheus("vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1.0\n"));
    assertThat(failure(probe(badLabel))).isEqualTo("vllm:cache_config_info num_gpu_blocks is not a positive whole number");
    Map<String, Answer> summed = new HashMap<>(EngineShapes.vllm(WINDOW, 16_384, 16));
    summed.put("/metrics", Answer.prometheus("vllm:cache_config_info{block_size=\"16\",engine=\"0\",num_gpu_blocks=\"9\"} 1\n"
        + "vllm:cache_config_info{block_size=\"16\",engine=\"1\",num_gpu_blocks=\"9\"} 1\n"));
    assertThat(failure(probe(summed))).contains("lacks kv_cache_size_tokens and lists 2 data-parallel engines");
  }
}

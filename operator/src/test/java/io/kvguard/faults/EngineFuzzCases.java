package io.kvguard.faults;

import static io.kvguard.faults.ProbeFuzzTest.mutations;
import static io.kvguard.faults.ProbeFuzzTest.policy;
import static io.kvguard.faults.ProbeFuzzTest.poolNear;
import static io.kvguard.faults.ProbeFuzzTest.window;

import io.kvguard.faults.ProbeFuzzTest.Case;
import io.kvguard.verdict.PoolPolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Fuzz generators for the engines beyond SGLang and vLLM. Each returns a healthy-shaped answer
 * whose true bound it knows (the pool, or for Ollama the context length), then corrupts it: JSON
 * with {@link JsonMutator}, Prometheus text with {@link MetricTextMutator}.
 */
final class EngineFuzzCases {
  private EngineFuzzCases() {}

  private static String models(long maxModelLen) {
    return "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":"
        + maxModelLen
        + "}]}";
  }

  /**
   * TGI in either shape: 2.2 (/info max_batch_total_tokens) or 3.x (/metrics
   * tgi_batch_max_total_tokens).
   */
  static Case tgi(Random random) {
    long window = window(random);
    long pool = poolNear(random, window);
    long maxTotal = random.nextBoolean() ? window : poolNear(random, window);
    boolean legacy = random.nextBoolean();
    String info =
        legacy
            ? Tgi22FaultEngine.info(String.valueOf(maxTotal), String.valueOf(pool))
            : Tgi3FaultEngine.info(String.valueOf(maxTotal));
    String metrics =
        legacy ? null : Tgi3FaultEngine.metrics(Tgi3FaultEngine.GAUGE + " " + pool + "\n");
    JsonMutator json = new JsonMutator(random);
    MetricTextMutator text = new MetricTextMutator(random, Set.of(Tgi3FaultEngine.GAUGE), Set.of());
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      if (metrics != null && random.nextInt(3) > 0) {
        metrics = text.mutate(metrics);
      } else {
        info = json.mutate(info);
      }
    }
    Map<String, String> bodies = new LinkedHashMap<>();
    bodies.put("/info", info);
    if (metrics != null) {
      bodies.put("/metrics", metrics);
    }
    return new Case(pool, policy(random, window), n > 0, bodies);
  }

  /**
   * TensorRT-LLM: Triton's block metrics or trtllm-serve's gauges, for one to three models; the
   * smallest counts.
   */
  static Case trtllm(Random random) {
    long window = window(random);
    int models = 1 + random.nextInt(3);
    boolean triton = random.nextInt(10) < 7;
    StringBuilder series = new StringBuilder();
    long truth = Long.MAX_VALUE;
    for (int m = 0; m < models; m++) {
      long perBlock = new long[] {16, 32, 64, 128}[random.nextInt(4)];
      long blocks = Math.max(1, poolNear(random, window) / perBlock);
      truth = Math.min(truth, blocks * perBlock);
      String model = "model_" + m;
      if (triton) {
        series.append(
            TrtllmFaultEngine.model(model, String.valueOf(blocks), String.valueOf(perBlock)));
      } else {
        String labels = "{engine_type=\"trtllm\",model_name=\"" + model + "\"}";
        series
            .append("trtllm_kv_cache_max_blocks")
            .append(labels)
            .append(' ')
            .append(blocks)
            .append('\n')
            .append("trtllm_kv_cache_tokens_per_block")
            .append(labels)
            .append(' ')
            .append(perBlock)
            .append('\n');
      }
    }
    String metrics = TrtllmFaultEngine.metrics(series.toString());
    MetricTextMutator text =
        new MetricTextMutator(
            random,
            Set.of(
                TrtllmFaultEngine.BLOCKS,
                "trtllm_kv_cache_max_blocks",
                "trtllm_kv_cache_tokens_per_block"),
            Set.of("kv_cache_block_type"));
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      metrics = text.mutate(metrics);
    }
    // Half the roles declare the block count exact: only those may verify (ProbeFuzzTest checks the
    // others never do).
    PoolPolicy drawn = policy(random, window);
    PoolPolicy policy =
        new PoolPolicy(
            drawn.contextWindow(),
            drawn.minPoolRatio(),
            drawn.allowEngineContextAbovePool(),
            drawn.versions(),
            random.nextBoolean());
    return new Case(truth, policy, n > 0, Map.of("/metrics", metrics));
  }

  /** llama.cpp: n_ctx of one slot is the pool (2025 builds, or the flattened 2024 settings). */
  static Case llamacpp(Random random) {
    long window = window(random);
    long nCtx = poolNear(random, window);
    int slots = 1 + random.nextInt(8);
    String props =
        random.nextInt(10) < 7
            ? LlamaCppFaultEngine.props(LlamaCppFaultEngine.settings(String.valueOf(nCtx)))
                .replace("\"total_slots\":4", "\"total_slots\":" + slots)
            : "{\"system_prompt\":\"\",\"default_generation_settings\":{\"n_ctx\":"
                + nCtx
                + ",\"n_predict\":-1,"
                + "\"model\":\"/models/llama-2-7b.Q4_K_M.gguf\",\"seed\":4294967295,\"temperature\":0.8,\"top_k\":40,"
                + "\"top_p\":0.95,\"stream\":false},\"total_slots\":"
                + slots
                + ",\"chat_template\":\"\"}";
    JsonMutator json = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      props = json.mutate(props);
    }
    return new Case(nCtx, policy(random, window), n > 0, Map.of("/props", props));
  }

  /**
   * Ollama: one loaded model, whose context length is the bound. (With several models, dropping one
   * entry is a coherent answer listing fewer models; Ollama states no count. See
   * docs/reliability.md, known limits.)
   */
  static Case ollama(Random random) {
    long window = window(random);
    long context = poolNear(random, window);
    String ps = OllamaFaultEngine.ps(String.valueOf(context));
    String version = "{\"version\":\"0." + random.nextInt(20) + "." + random.nextInt(10) + "\"}";
    JsonMutator json = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      if (random.nextInt(5) == 0) {
        version = json.mutate(version);
      } else {
        ps = json.mutate(ps);
      }
    }
    return new Case(
        context, policy(random, window), n > 0, Map.of("/api/ps", ps, "/api/version", version));
  }

  /**
   * The generic probe with JSON pointers (the spec of {@link GenericJsonFaultEngine}): pool =
   * blocks × 16.
   */
  static Case genericJson(Random random) {
    long window = window(random);
    long blocks = Math.max(1, poolNear(random, window) / GenericJsonFaultEngine.BLOCK_SIZE);
    long maxPrompt = random.nextBoolean() ? window : poolNear(random, window);
    String stats = GenericJsonFaultEngine.stats(String.valueOf(blocks), String.valueOf(maxPrompt));
    JsonMutator json = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      stats = json.mutate(stats);
    }
    return new Case(
        blocks * GenericJsonFaultEngine.BLOCK_SIZE,
        policy(random, window),
        n > 0,
        Map.of("/stats", stats));
  }

  /**
   * The generic probe with a Prometheus metric (the spec of {@link GenericMetricFaultEngine}): the
   * smallest of one to three model="m" rank series × 16; a draft model's small series must not
   * count.
   */
  static Case genericMetric(Random random) {
    long window = window(random);
    int ranks = 1 + random.nextInt(3);
    StringBuilder series = new StringBuilder();
    long truth = Long.MAX_VALUE;
    for (int r = 0; r < ranks; r++) {
      long blocks = Math.max(1, poolNear(random, window) / GenericJsonFaultEngine.BLOCK_SIZE);
      truth = Math.min(truth, blocks * GenericJsonFaultEngine.BLOCK_SIZE);
      series.append(GenericMetricFaultEngine.rank(String.valueOf(r), String.valueOf(blocks)));
    }
    String metrics = GenericMetricFaultEngine.metrics(series.toString());
    String models = models(random.nextBoolean() ? window : poolNear(random, window));
    MetricTextMutator text =
        new MetricTextMutator(random, Set.of(GenericMetricFaultEngine.METRIC), Set.of("model"));
    JsonMutator json = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      if (random.nextInt(5) == 0) {
        models = json.mutate(models);
      } else {
        metrics = text.mutate(metrics);
      }
    }
    return new Case(
        truth, policy(random, window), n > 0, Map.of("/metrics", metrics, "/v1/models", models));
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * TensorRT-LLM, from {@code GET /metrics} in any of three shapes: Triton's
 * {@code nv_trt_llm_kv_cache_block_metrics} ({@code kv_cache_block_type} "max" × "tokens_per"); trtllm-serve's
 * Prometheus gauges {@code trtllm_kv_cache_max_blocks} × {@code trtllm_kv_cache_tokens_per_block}; or
 * trtllm-serve's JSON iteration stats ({@code kvCacheStats.maxNumBlocks} × {@code tokensPerBlock}). Neither
 * exports a context length or a version. With attention data parallelism only one rank's capacity may be
 * exported, and the pod's notes say so.
 */
public final class TrtllmProbe implements EngineProbe {
  static final String METRICS = "/metrics";
  static final String TRITON_BLOCKS = "nv_trt_llm_kv_cache_block_metrics";
  static final String SERVE_MAX_BLOCKS = "trtllm_kv_cache_max_blocks";
  static final String SERVE_TOKENS_PER_BLOCK = "trtllm_kv_cache_tokens_per_block";
  static final String ONE_RANK_NOTE = "one KV capacity is exported: with attention data parallelism TensorRT-LLM"
      + " reports a single rank, so the other ranks' pools are unverified";

  private final EngineHttp http;

  public TrtllmProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.TRTLLM;
  }

  @Override
  public ProbeOutcome probe(EngineEndpoint endpoint) {
    try {
      EngineResponse response = http.getOk(endpoint, METRICS);
      if (response.body().length == 0) {
        throw new ProbeException("GET " + METRICS + " answered an empty body");
      }
      List<String> notes = new ArrayList<>();
      long pool = response.isJson() ? iterationStats(StrictJson.parse(response), notes)
          : prometheus(PrometheusText.parse(response), notes);
      notes.add("TensorRT-LLM exports no context length: EngineContextExceedsPool is not checked");
      return ProbeOutcome.observed(new PoolObservation(pool, OptionalLong.empty(), null, null, notes));
    } catch (ProbeException e) {
      return ProbeOutcome.failed(e.getMessage());
    }
  }

  static long prometheus(List<PrometheusText.Sample> samples, List<String> notes) throws ProbeException {
    List<PrometheusText.Sample> triton = PrometheusText.named(samples, TRITON_BLOCKS);
    if (!triton.isEmpty()) {
      Map<Map<String, String>, Long> max = new LinkedHashMap<>();
      Map<Map<String, String>, Long> tokensPer = new LinkedHashMap<>();
      for (PrometheusText.Sample sample : triton) {
        String type = sample.labels().get("kv_cache_block_type");
        Map<String, String> key = new LinkedHashMap<>(sample.labels());
        key.remove("kv_cache_block_type");
        if ("max".equals(type)) {
          put(max, key, PrometheusText.tokens(sample.value(), TRITON_BLOCKS + "{kv_cache_block_type=\"max\"}"));
        } else if ("tokens_per".equals(type)) {
          put(tokensPer, key, PrometheusText.tokens(sample.value(), TRITON_BLOCKS + "{kv_cache_block_type=\"tokens_per\"}"));
        }
      }
      notes.add("pool = " + TRITON_BLOCKS + " max × tokens_per (Triton)");
      return smallestProduct(max, tokensPer, TRITON_BLOCKS + "{kv_cache_block_type=\"max\"}",
          TRITON_BLOCKS + "{kv_cache_block_type=\"tokens_per\"}", notes);
    }
    List<PrometheusText.Sample> maxBlocks = PrometheusText.named(samples, SERVE_MAX_BLOCKS);
    List<PrometheusText.Sample> perBlock = PrometheusText.named(samples, SERVE_TOKENS_PER_BLOCK);
    if (maxBlocks.isEmpty() && perBlock.isEmpty()) {
      throw new ProbeException(METRICS + " has neither " + TRITON_BLOCKS + " (Triton) nor " + SERVE_MAX_BLOCKS
          + " and " + SERVE_TOKENS_PER_BLOCK + " (trtllm-serve)");
    }
    Map<Map<String, String>, Long> max = new LinkedHashMap<>();
    Map<Map<String, String>, Long> tokensPer = new LinkedHashMap<>();
    for (PrometheusText.Sample sample : maxBlocks) {
      put(max, sample.labels(), PrometheusText.tokens(sample.value(), METRICS + " " + SERVE_MAX_BLOCKS));
    }
    for (PrometheusText.Sample sample : perBlock) {
      put(tokensPer, sample.labels(), PrometheusText.tokens(sample.value(), METRICS + " " + SERVE_TOKENS_PER_BLOCK));
    }
    notes.add("pool = " + SERVE_MAX_BLOCKS + " × " + SERVE_TOKENS_PER_BLOCK + " (trtllm-serve)");
    return smallestProduct(max, tokensPer, SERVE_MAX_BLOCKS, SERVE_TOKENS_PER_BLOCK, notes);
  }

  /** trtllm-serve's JSON {@code /metrics}: a list of iteration stats; the newest that carries kvCacheStats counts. */
  static long iterationStats(JsonNode root, List<String> notes) throws ProbeException {
    if (!root.isArray()) {
      throw new ProbeException(METRICS + " answered JSON that is not a list of iteration stats");
    }
    for (int i = root.size() - 1; i >= 0; i--) {
      JsonNode stats = root.get(i).get("kvCacheStats");
      if (stats == null || !stats.isObject()) {
        continue;
      }
      String where = METRICS + "[" + i + "].kvCacheStats";
      OptionalLong blocks = StrictJson.optionalTokens(stats, "maxNumBlocks", where);
      OptionalLong perBlock = StrictJson.optionalTokens(stats, "tokensPerBlock", where);
      if (blocks.isEmpty() || perBlock.isEmpty()) {
        throw new ProbeException(where + " lacks " + (blocks.isEmpty() ? "maxNumBlocks" : "tokensPerBlock"));
      }
      notes.add("pool = kvCacheStats.maxNumBlocks × tokensPerBlock from trtllm-serve iteration stats");
      notes.add(ONE_RANK_NOTE);
      return multiply(blocks.getAsLong(), perBlock.getAsLong(), where + " maxNumBlocks × tokensPerBlock");
    }
    throw new ProbeException(METRICS + " lists no iteration stats with kvCacheStats (trtllm-serve reports them only"
        + " after it ran an iteration, and each read consumes them)");
  }

  private static long smallestProduct(Map<Map<String, String>, Long> max, Map<Map<String, String>, Long> tokensPer,
      String maxName, String tokensPerName, List<String> notes) throws ProbeException {
    if (max.isEmpty() || tokensPer.isEmpty()) {
      throw new ProbeException(METRICS + " has no " + (max.isEmpty() ? maxName : tokensPerName) + " series");
    }
    if (!max.keySet().equals(tokensPer.keySet())) {
      throw new ProbeException(METRICS + " series of " + maxName + " and " + tokensPerName + " do not pair up by labels");
    }
    long smallest = Long.MAX_VALUE;
    for (Map.Entry<Map<String, String>, Long> entry : max.entrySet()) {
      smallest = Math.min(smallest, multiply(entry.getValue(), tokensPer.get(entry.getKey()), maxName + " × " + tokensPerName));
    }
    notes.add(max.size() == 1 ? ONE_RANK_NOTE : "pool is the smallest of " + max.size() + " exported KV capacities");
    return smallest;
  }

  private static void put(Map<Map<String, String>, Long> into, Map<String, String> key, long value) throws ProbeException {
    Long previous = into.put(Map.copyOf(key), value);
    if (previous != null && previous != value) {
      throw new ProbeException(METRICS + " has disagreeing duplicate KV capacity series");
    }
  }

  private static long multiply(long a, long b, String what) throws ProbeException {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      throw new ProbeException(what + " overflows");
    }
  }
}

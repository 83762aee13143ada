package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * TensorRT-LLM, read on the role's metricsPort (Triton's metrics port) or its port (trtllm-serve).
 *
 * <p>Where the figures come from (docs/engines.md has the sources): Triton's {@code /metrics} page
 * ({@code nv_trt_llm_kv_cache_block_metrics} "max" × "tokens_per"); trtllm-serve's JSON iteration
 * stats on {@code /metrics} ({@code kvCacheStats}, and in newer builds {@code
 * kvCacheIterationStats} per attention window); trtllm-serve's Prometheus gauges on {@code
 * /prometheus/metrics} ({@code trtllm_kv_cache_max_blocks} × {@code
 * trtllm_kv_cache_tokens_per_block}, mounted only with {@code return_perf_metrics}).
 *
 * <p>Every {@code maxNumBlocks} is the block manager's {@code getMaxNumBlocks()}: primary (GPU)
 * plus secondary (host-offload) blocks, added up over every attention window. It is only an upper
 * bound of the GPU pool. Only {@code kvCacheIterationStats} with a single window gives the GPU
 * count ({@code primaryMaxNumBlocks}); with several windows the answer itself shows the figure is
 * not one pool.
 */
public final class TrtllmProbe implements EngineProbe {
  static final String METRICS = "/metrics";
  static final String PROMETHEUS_METRICS = "/prometheus/metrics";
  static final String VERSION = "/version";
  static final String TRITON_BLOCKS = "nv_trt_llm_kv_cache_block_metrics";
  static final String SERVE_MAX_BLOCKS = "trtllm_kv_cache_max_blocks";
  static final String SERVE_TOKENS_PER_BLOCK = "trtllm_kv_cache_tokens_per_block";
  static final String SERVE_MODEL_CONFIG = "trtllm_model_config_info";
  static final String ONE_RANK_NOTE =
      "one KV capacity is exported: with attention data parallelism TensorRT-LLM"
          + " reports a single rank, so the other ranks' pools are unverified";
  static final String NO_CONTEXT_NOTE =
      "TensorRT-LLM reports no context length here (trtllm-serve exports"
          + " trtllm_model_config_info{max_model_len} only with return_perf_metrics and an explicit max_seq_len):"
          + " EngineContextExceedsPool is not checked";
  static final String TRITON_CAVEAT =
      "Triton's "
          + TRITON_BLOCKS
          + " max counts host-offload blocks"
          + " (kv_cache_host_memory_bytes) and adds up the pools of every attention window (max_attention_window_size),"
          + " and the page shows neither; if host offload is off and the model has one attention window, declare"
          + " blockCountIsPool: true on the role";
  static final String SERVE_CAVEAT =
      "trtllm-serve's maxNumBlocks counts host-offload blocks"
          + " (kv_cache_config.host_cache_size) and adds up the pools of every attention window"
          + " (kv_cache_config.max_attention_window), and this answer has no per-window GPU count (kvCacheIterationStats);"
          + " if host offload is off and the model has one attention window, declare blockCountIsPool: true on the role";
  static final String NO_FIGURES_ADVICE =
      "trtllm-serve reports KV figures only after it ran an iteration: turn on"
          + " enable_iter_perf_stats in its LLM API options (--extra_llm_api_options) for /metrics, or return_perf_metrics"
          + " for /prometheus/metrics (whose collector then drains the /metrics stats), and have the kubelet run"
          + " generations while kvguard keeps traffic away (a readinessProbe on /health_generate); for Triton, set the"
          + " role's metricsPort to its metrics port (8002 by default)";

  /**
   * What the probe reads of the metrics pages: every figure family, and the iteration stats' block
   * counts.
   */
  static final Reading GAUGES_READING =
      Reading.metrics(TRITON_BLOCKS, SERVE_MAX_BLOCKS, SERVE_TOKENS_PER_BLOCK, SERVE_MODEL_CONFIG);

  static final Reading PAGE_READING =
      GAUGES_READING.andJson(
          "/*/kvCacheStats/maxNumBlocks",
          "/*/kvCacheStats/tokensPerBlock",
          "/*/kvCacheIterationStats/*/primaryMaxNumBlocks",
          "/*/kvCacheIterationStats/*/secondaryMaxNumBlocks");

  private final EngineHttp http;

  public TrtllmProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.TRTLLM;
  }

  /** A figure read from one of the engine's answers, and what kind of bound it is. */
  record Figure(long tokens, PoolObservation.PoolSource source, String caveat) {
    static Figure exact(long tokens) {
      return new Figure(tokens, PoolObservation.PoolSource.ENGINE_KV_POOL, null);
    }
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    EngineEndpoint metrics = endpoint.metrics();
    List<String> notes = new ArrayList<>();
    Optional<EngineResponse> page = http.getOkUnlessAbsent(metrics, METRICS, PAGE_READING);
    if (page.isPresent() && page.get().isEmpty()) {
      throw new ProbeException("GET " + METRICS + " answered an empty body");
    }
    if (page.isPresent() && page.get().isPrometheusText()) {
      // Triton (or an older trtllm-serve layout): one Prometheus page holds every figure.
      List<PrometheusText.Sample> samples = PrometheusText.parse(page.get());
      boolean triton = !PrometheusText.named(samples, TRITON_BLOCKS).isEmpty();
      long bound = prometheus(samples, notes, METRICS);
      return observed(
          new Figure(
              bound, PoolObservation.PoolSource.UPPER_BOUND, triton ? TRITON_CAVEAT : SERVE_CAVEAT),
          configuredContext(samples),
          null,
          notes);
    }
    if (page.isPresent() && !page.get().isJson()) {
      throw new ProbeException(
          "GET "
              + METRICS
              + " answered content type "
              + EngineText.safe(page.get().contentType())
              + ", expected Prometheus text (Triton) or JSON iteration stats (trtllm-serve)");
    }
    // trtllm-serve: JSON iteration stats on /metrics, Prometheus gauges on /prometheus/metrics.
    Optional<Figure> fromStats =
        page.isEmpty() ? Optional.empty() : iterationStats(StrictJson.parse(page.get()), notes);
    Optional<EngineResponse> gauges =
        http.getOkUnlessAbsent(metrics, PROMETHEUS_METRICS, GAUGES_READING);
    List<PrometheusText.Sample> gaugeSamples =
        gauges.isEmpty() ? List.of() : PrometheusText.parse(gauges.get());
    Optional<Figure> figure = fromStats;
    if (figure.isEmpty() && !PrometheusText.named(gaugeSamples, SERVE_MAX_BLOCKS).isEmpty()) {
      figure =
          Optional.of(
              new Figure(
                  prometheus(gaugeSamples, notes, PROMETHEUS_METRICS),
                  PoolObservation.PoolSource.UPPER_BOUND,
                  SERVE_CAVEAT));
    }
    if (figure.isEmpty()) {
      throw new ProbeException(
          "TensorRT-LLM answered no KV figures: GET "
              + METRICS
              + " "
              + (page.isEmpty()
                  ? "answered HTTP 404"
                  : "lists no iteration stats with kvCacheStats")
              + ", and GET "
              + PROMETHEUS_METRICS
              + " "
              + (gauges.isEmpty()
                  ? "answered HTTP 404 (mounted only with return_perf_metrics)"
                  : "has no " + SERVE_MAX_BLOCKS + " yet (set after the first finished request)")
              + "; "
              + NO_FIGURES_ADVICE);
    }
    return observed(figure.get(), configuredContext(gaugeSamples), version(endpoint), notes);
  }

  private static ProbeOutcome observed(
      Figure figure, OptionalLong context, String version, List<String> notes) {
    if (context.isEmpty()) {
      notes.add(NO_CONTEXT_NOTE);
    } else {
      notes.add(
          "engine context = " + SERVE_MODEL_CONFIG + " max_model_len (the configured max_seq_len)");
    }
    if (figure.source() == PoolObservation.PoolSource.ENGINE_KV_POOL) {
      return ProbeOutcome.observed(
          new PoolObservation(figure.tokens(), context, version, null, notes));
    }
    return ProbeOutcome.observed(
        PoolObservation.upperBound(
            figure.tokens(), context, version, null, notes, figure.source(), figure.caveat()));
  }

  /**
   * The engine's configured context length, from trtllm-serve's {@code trtllm_model_config_info}
   * info gauge (its {@code max_model_len} label carries {@code max_seq_len} when the engine was
   * given one); empty otherwise.
   */
  static OptionalLong configuredContext(List<PrometheusText.Sample> samples) throws ProbeException {
    OptionalLong context = OptionalLong.empty();
    for (PrometheusText.Sample sample : PrometheusText.named(samples, SERVE_MODEL_CONFIG)) {
      String value = sample.labels().get("max_model_len");
      if (value == null) {
        continue;
      }
      long tokens = PrometheusText.tokens(value, SERVE_MODEL_CONFIG + " max_model_len");
      if (context.isPresent() && context.getAsLong() != tokens) {
        throw new ProbeException(SERVE_MODEL_CONFIG + " series disagree on max_model_len");
      }
      context = OptionalLong.of(tokens);
    }
    return context;
  }

  static long prometheus(List<PrometheusText.Sample> samples, List<String> notes, String page)
      throws ProbeException {
    List<PrometheusText.Sample> triton = PrometheusText.named(samples, TRITON_BLOCKS);
    if (!triton.isEmpty()) {
      Map<Map<String, String>, Long> max = new LinkedHashMap<>();
      Map<Map<String, String>, Long> tokensPer = new LinkedHashMap<>();
      for (PrometheusText.Sample sample : triton) {
        String type = sample.labels().get("kv_cache_block_type");
        Map<String, String> key = new LinkedHashMap<>(sample.labels());
        key.remove("kv_cache_block_type");
        if ("max".equals(type)) {
          put(
              max,
              key,
              PrometheusText.tokens(
                  sample.value(), TRITON_BLOCKS + "{kv_cache_block_type=\"max\"}"),
              page);
        } else if ("tokens_per".equals(type)) {
          put(
              tokensPer,
              key,
              PrometheusText.tokens(
                  sample.value(), TRITON_BLOCKS + "{kv_cache_block_type=\"tokens_per\"}"),
              page);
        }
      }
      notes.add("KV figure = " + TRITON_BLOCKS + " max × tokens_per (Triton)");
      return smallestProduct(
          max,
          tokensPer,
          TRITON_BLOCKS + "{kv_cache_block_type=\"max\"}",
          TRITON_BLOCKS + "{kv_cache_block_type=\"tokens_per\"}",
          notes,
          page);
    }
    List<PrometheusText.Sample> maxBlocks = PrometheusText.named(samples, SERVE_MAX_BLOCKS);
    List<PrometheusText.Sample> perBlock = PrometheusText.named(samples, SERVE_TOKENS_PER_BLOCK);
    if (maxBlocks.isEmpty() && perBlock.isEmpty()) {
      throw new ProbeException(
          page
              + " has neither "
              + TRITON_BLOCKS
              + " (Triton) nor "
              + SERVE_MAX_BLOCKS
              + " and "
              + SERVE_TOKENS_PER_BLOCK
              + " (trtllm-serve)");
    }
    Map<Map<String, String>, Long> max = new LinkedHashMap<>();
    Map<Map<String, String>, Long> tokensPer = new LinkedHashMap<>();
    for (PrometheusText.Sample sample : maxBlocks) {
      put(
          max,
          sample.labels(),
          PrometheusText.tokens(sample.value(), page + " " + SERVE_MAX_BLOCKS),
          page);
    }
    for (PrometheusText.Sample sample : perBlock) {
      put(
          tokensPer,
          sample.labels(),
          PrometheusText.tokens(sample.value(), page + " " + SERVE_TOKENS_PER_BLOCK),
          page);
    }
    notes.add(
        "KV figure = "
            + SERVE_MAX_BLOCKS
            + " × "
            + SERVE_TOKENS_PER_BLOCK
            + " (trtllm-serve "
            + page
            + ")");
    return smallestProduct(max, tokensPer, SERVE_MAX_BLOCKS, SERVE_TOKENS_PER_BLOCK, notes, page);
  }

  /**
   * trtllm-serve's JSON {@code /metrics}: a list of iteration stats; the newest that carries
   * kvCacheStats counts. Empty when the list holds none (the engine ran no iteration since the last
   * read).
   */
  static Optional<Figure> iterationStats(JsonNode root, List<String> notes) throws ProbeException {
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
        throw new ProbeException(
            where + " lacks " + (blocks.isEmpty() ? "maxNumBlocks" : "tokensPerBlock"));
      }
      notes.add(ONE_RANK_NOTE);
      JsonNode windows = root.get(i).get("kvCacheIterationStats");
      if (windows != null && !windows.isNull()) {
        return Optional.of(
            perWindow(
                windows,
                perBlock.getAsLong(),
                METRICS + "[" + i + "].kvCacheIterationStats",
                notes));
      }
      notes.add(
          "KV figure = kvCacheStats.maxNumBlocks × tokensPerBlock from trtllm-serve iteration stats");
      return Optional.of(
          new Figure(
              multiply(
                  blocks.getAsLong(),
                  perBlock.getAsLong(),
                  where + " maxNumBlocks × tokensPerBlock"),
              PoolObservation.PoolSource.UPPER_BOUND,
              SERVE_CAVEAT));
    }
    return Optional.empty();
  }

  /**
   * {@code kvCacheIterationStats}: one entry per attention-window size with the GPU ({@code
   * primaryMaxNumBlocks}) and host ({@code secondaryMaxNumBlocks}) block counts. One window: its
   * GPU blocks are the pool. Several: their pools serve different layers and which bounds a prompt
   * is not reported, so their sum is only an upper bound.
   */
  private static Figure perWindow(JsonNode windows, long perBlock, String where, List<String> notes)
      throws ProbeException {
    if (!windows.isObject() || windows.isEmpty()) {
      throw new ProbeException(where + " is not an object of attention windows");
    }
    long primary = 0;
    long secondary = 0;
    List<String> sizes = new ArrayList<>();
    for (var fields = windows.fields(); fields.hasNext(); ) {
      Map.Entry<String, JsonNode> window = fields.next();
      if (!window.getKey().matches("[0-9]{1,10}")) {
        throw new ProbeException(where + " has a window key that is not a token count");
      }
      String at = where + "[" + window.getKey() + "]";
      OptionalLong gpu = StrictJson.optionalTokens(window.getValue(), "primaryMaxNumBlocks", at);
      if (gpu.isEmpty()) {
        throw new ProbeException(at + " lacks primaryMaxNumBlocks");
      }
      primary = add(primary, gpu.getAsLong(), where + " primaryMaxNumBlocks");
      JsonNode host = window.getValue().get("secondaryMaxNumBlocks");
      // Zero host blocks is the usual answer; any other value must be a block count like the GPU
      // one.
      if (host != null && !(host.isIntegralNumber() && host.asLong() == 0)) {
        OptionalLong hostBlocks =
            StrictJson.optionalTokens(window.getValue(), "secondaryMaxNumBlocks", at);
        if (hostBlocks.isEmpty()) {
          throw new ProbeException(at + " secondaryMaxNumBlocks is not a block count");
        }
        secondary = add(secondary, hostBlocks.getAsLong(), where + " secondaryMaxNumBlocks");
      }
      sizes.add(window.getKey());
    }
    long tokens = multiply(primary, perBlock, where + " primaryMaxNumBlocks × tokensPerBlock");
    if (sizes.size() > 1) {
      notes.add(
          "KV figure = the primaryMaxNumBlocks of "
              + sizes.size()
              + " attention windows ("
              + String.join(", ", sizes)
              + " tokens) × tokensPerBlock");
      return new Figure(
          tokens,
          PoolObservation.PoolSource.UPPER_BOUND_SHOWN,
          "TensorRT-LLM reports "
              + sizes.size()
              + " attention-window pools (windows of "
              + String.join(", ", sizes)
              + " tokens), whose blocks serve different"
              + " layers, and not which of them bounds a prompt; serve the model with one attention window"
              + " (kv_cache_config.max_attention_window unset or a single value)");
    }
    notes.add(
        "pool = kvCacheIterationStats["
            + sizes.get(0)
            + "].primaryMaxNumBlocks × tokensPerBlock (GPU blocks only)");
    if (secondary > 0) {
      notes.add(
          "host offload: " + secondary + " secondary (host) blocks are not counted in the pool");
    }
    return Figure.exact(tokens);
  }

  private String version(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response = http.get(endpoint, VERSION, Reading.json("/version"));
    if (response.status() != 200 || !response.isJson()) {
      return null;
    }
    return EngineText.version(StrictJson.optionalText(StrictJson.parse(response), "version"));
  }

  private static long smallestProduct(
      Map<Map<String, String>, Long> max,
      Map<Map<String, String>, Long> tokensPer,
      String maxName,
      String tokensPerName,
      List<String> notes,
      String page)
      throws ProbeException {
    if (max.isEmpty() || tokensPer.isEmpty()) {
      throw new ProbeException(
          page + " has no " + (max.isEmpty() ? maxName : tokensPerName) + " series");
    }
    if (!max.keySet().equals(tokensPer.keySet())) {
      throw new ProbeException(
          page + " series of " + maxName + " and " + tokensPerName + " do not pair up by labels");
    }
    long smallest = Long.MAX_VALUE;
    for (Map.Entry<Map<String, String>, Long> entry : max.entrySet()) {
      smallest =
          Math.min(
              smallest,
              multiply(
                  entry.getValue(),
                  tokensPer.get(entry.getKey()),
                  maxName + " × " + tokensPerName));
    }
    notes.add(
        max.size() == 1
            ? ONE_RANK_NOTE
            : "KV figure is the smallest of " + max.size() + " exported KV capacities");
    return smallest;
  }

  private static void put(
      Map<Map<String, String>, Long> into, Map<String, String> key, long value, String page)
      throws ProbeException {
    Long previous = into.put(Map.copyOf(key), value);
    if (previous != null && previous != value) {
      throw new ProbeException(page + " has disagreeing duplicate KV capacity series");
    }
  }

  private static long add(long a, long b, String what) throws ProbeException {
    try {
      return Math.addExact(a, b);
    } catch (ArithmeticException e) {
      throw new ProbeException(what + " overflows");
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

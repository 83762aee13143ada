package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * vLLM: the pool comes from the labels of the {@code vllm:cache_config_info} info gauge on {@code
 * /metrics} (read on the role's metricsPort when it names one). {@code kv_cache_size_tokens}, where
 * the build exports it, is vLLM's own group-aware capacity (vllm/config/cache.py); vLLM writes one
 * CacheConfig onto every data-parallel engine's series, so it is the first engine's figure, not one
 * per engine. Older builds export only {@code num_gpu_blocks x block_size}, which over-reports
 * hybrid models (the page cannot show whether the model is one) and with data parallelism sums
 * {@code num_gpu_blocks} across engines: it is an upper bound, and vLLM's own start-up check (it
 * refuses to start unless one request of max_model_len fits its KV cache) makes the context length
 * a lower bound.
 *
 * <p>{@code --num-gpu-blocks-override} (label {@code num_gpu_blocks_override}, "None" when unset)
 * replaces the measured block count: {@code num_gpu_blocks} and {@code kv_cache_size_tokens} are
 * then the overridden pool the scheduler uses ({@code vllm/v1/engine/core.py} {@code
 * _initialize_kv_caches}, {@code vllm/v1/core/kv_cache_utils.py} {@code may_override_num_blocks},
 * {@code update_kv_cache_capacity} at jsboige/vllm main ffd91ee17a). Until PR #41069 (opened
 * 2026-04-28; the first release carrying it was not read) the start-up check ignored the override,
 * so an engine could start with a pool smaller than one max_model_len request (issue #27181: 16
 * tokens for a 2,048-token context); with an override the context length is therefore no lower
 * bound of the pool, and the block product stays a plain upper bound.
 */
public final class VllmProbe implements EngineProbe {
  static final String METRICS = "/metrics";
  static final String VERSION = "/version";
  static final String CACHE_CONFIG = "vllm:cache_config_info";

  private final EngineHttp http;

  public VllmProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.VLLM;
  }

  @Override
  public java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.of(new VllmRejection());
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    // Kept: the cache_config_info series, and which data-parallel engines any vllm: series names.
    EngineResponse metrics =
        http.getOk(
            endpoint.metrics(),
            METRICS,
            Reading.metrics(CACHE_CONFIG).withCensus("vllm:", "engine"));
    if (!metrics.isPrometheusText()) {
      throw new ProbeException(
          "GET "
              + METRICS
              + " answered content type "
              + EngineText.safe(metrics.contentType())
              + ", expected Prometheus text");
    }
    if (metrics.isEmpty()) {
      throw new ProbeException("GET " + METRICS + " answered an empty body");
    }
    List<String> notes = new ArrayList<>();
    List<PrometheusText.Sample> cacheConfig =
        PrometheusText.named(PrometheusText.parse(metrics), CACHE_CONFIG);
    requireCacheConfig(PrometheusText.prefixSeen(metrics), cacheConfig);
    Pool pool = pool(cacheConfig, notes);
    requireEveryEngineDescribed(PrometheusText.census(metrics), cacheConfig);
    OptionalLong engineContext = OpenAiModels.maxModelLen(http, endpoint);
    if (engineContext.isEmpty()) {
      // Both engines always report it; without it the over-pool rejection path cannot be ruled out.
      throw new ProbeException(
          "/v1/models reports no max_model_len: the engine's own context length is unknown");
    }
    String version = version(endpoint);
    if (pool.exact()) {
      return ProbeOutcome.observed(
          new PoolObservation(pool.tokens(), engineContext, version, null, notes));
    }
    if (pool.overridden()) {
      return ProbeOutcome.observed(
          PoolObservation.upperBound(
              pool.tokens(),
              engineContext,
              version,
              null,
              notes,
              PoolObservation.PoolSource.UPPER_BOUND,
              OVERRIDE_CAVEAT));
    }
    return ProbeOutcome.observed(
        PoolObservation.upperBound(
            pool.tokens(),
            engineContext,
            version,
            null,
            notes,
            PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD,
            PRODUCT_CAVEAT));
  }

  static final String PRODUCT_CAVEAT =
      "this vLLM build exports no kv_cache_size_tokens, and num_gpu_blocks ×"
          + " block_size over-reports hybrid models (sliding-window, chunked-local-attention or Mamba layers), which the"
          + " metrics page cannot rule out; run a vLLM build that exports kv_cache_size_tokens, or, if the model has one"
          + " KV-cache group, declare blockCountIsPool: true on the role";

  static final String OVERRIDE_CAVEAT =
      "the engine runs with --num-gpu-blocks-override and exports no kv_cache_size_tokens:"
          + " num_gpu_blocks × block_size counts the overridden blocks (an upper bound for hybrid"
          + " models), and vLLM builds before PR #41069 start without checking that one request of"
          + " max_model_len fits them, so max_model_len proves nothing about the pool; drop the"
          + " override, or run a vLLM build that exports kv_cache_size_tokens, or, if the model has"
          + " one KV-cache group, declare blockCountIsPool: true on the role";

  /** The label that carries {@code --num-gpu-blocks-override}; vLLM writes "None" when unset. */
  static final String OVERRIDE_LABEL = "num_gpu_blocks_override";

  /**
   * The figure; whether it is vLLM's own pool ({@code kv_cache_size_tokens}) or the block product;
   * and whether {@code --num-gpu-blocks-override} set the block count.
   */
  record Pool(long tokens, boolean exact, boolean overridden) {}

  /**
   * vLLM creates {@code vllm:cache_config_info} only in its Prometheus stat logger, which {@code
   * --disable-log-stats} skips together with every other {@code vllm:} series; a page with other
   * {@code vllm:} series but no cache config comes from a build or logger setup that does not
   * export it.
   */
  /** {@code otherVllmSeries}: whether the page has any vllm: series at all. */
  static void requireCacheConfig(boolean otherVllmSeries, List<PrometheusText.Sample> cacheConfig)
      throws ProbeException {
    if (!cacheConfig.isEmpty()) {
      return;
    }
    if (!otherVllmSeries) {
      throw new ProbeException(
          METRICS
              + " has no "
              + CACHE_CONFIG
              + " series and no other vllm: series: the engine"
              + " runs with --disable-log-stats, which skips vLLM's stat loggers, so it never exports its KV cache size;"
              + " remove --disable-log-stats from the engine's arguments");
    }
    throw new ProbeException(
        METRICS
            + " has no "
            + CACHE_CONFIG
            + " series, though it has other vllm: series: this"
            + " vLLM build or its stat-logger setup does not export the cache config, so the pool cannot be read");
  }

  static Pool pool(List<PrometheusText.Sample> series, List<String> notes) throws ProbeException {
    if (series.isEmpty()) {
      throw new ProbeException(METRICS + " has no " + CACHE_CONFIG + " series");
    }
    Map<String, Long> byEngine = new HashMap<>();
    boolean sized = series.stream().anyMatch(s -> s.labels().containsKey("kv_cache_size_tokens"));
    for (PrometheusText.Sample sample : series) {
      String engine = sample.labels().getOrDefault("engine", "0");
      if (sample.value() != 1.0) {
        // An info gauge is 1 by definition; any other value means the series is not what this probe
        // knows.
        throw new ProbeException(
            CACHE_CONFIG + " value is " + sample.value() + ", expected 1 (an info gauge)");
      }
      long tokens;
      if (sized) {
        tokens =
            PrometheusText.tokens(
                sample.labels().get("kv_cache_size_tokens"),
                CACHE_CONFIG + "{engine=\"" + EngineText.safe(engine) + "\"} kv_cache_size_tokens");
      } else {
        long blocks =
            PrometheusText.tokens(
                sample.labels().get("num_gpu_blocks"), CACHE_CONFIG + " num_gpu_blocks");
        long blockSize =
            PrometheusText.tokens(sample.labels().get("block_size"), CACHE_CONFIG + " block_size");
        try {
          tokens = Math.multiplyExact(blocks, blockSize);
        } catch (ArithmeticException e) {
          throw new ProbeException(CACHE_CONFIG + " num_gpu_blocks × block_size overflows");
        }
      }
      Long previous = byEngine.put(engine, tokens);
      if (previous != null && previous != tokens) {
        throw new ProbeException(
            CACHE_CONFIG + " has disagreeing series for engine " + EngineText.safe(engine));
      }
    }
    if (!sized && byEngine.size() > 1) {
      throw new ProbeException(
          CACHE_CONFIG
              + " lacks kv_cache_size_tokens and lists "
              + byEngine.size()
              + " data-parallel engines, whose num_gpu_blocks vLLM sums: the per-engine pool cannot be measured"
              + " (run a vLLM build that exports kv_cache_size_tokens)");
    }
    long smallest = byEngine.values().stream().mapToLong(Long::longValue).min().orElseThrow();
    OptionalLong override = override(series);
    if (override.isPresent()) {
      notes.add(
          "--num-gpu-blocks-override "
              + override.getAsLong()
              + " sets the block count: "
              + (sized
                  ? "kv_cache_size_tokens is the overridden pool the scheduler uses, judged as the"
                      + " pool (vLLM before PR #41069 did not check max_model_len against it at start-up)"
                  : "max_model_len is no lower bound of the pool (vLLM before PR #41069 did not"
                      + " check it against the override at start-up)"));
    }
    if (!sized) {
      notes.add(
          "pool = num_gpu_blocks × block_size (this vLLM build exports no kv_cache_size_tokens): an upper bound"
              + " for hybrid models");
    } else if (byEngine.size() > 1 && byEngine.values().stream().distinct().count() == 1) {
      notes.add(
          "kv_cache_size_tokens of data-parallel engine 0 only: vLLM writes the first engine's value onto all "
              + byEngine.size()
              + " engines' series, so the other engines' pools are not reported");
    } else if (byEngine.size() > 1) {
      notes.add(
          "the "
              + byEngine.size()
              + " engines' series carry different kv_cache_size_tokens; the smallest counts");
    }
    return new Pool(smallest, sized, override.isPresent());
  }

  /** The override the series carry, if any; a value other than "None" or blocks fails closed. */
  static OptionalLong override(List<PrometheusText.Sample> series) throws ProbeException {
    OptionalLong override = OptionalLong.empty();
    for (PrometheusText.Sample sample : series) {
      String value = sample.labels().get(OVERRIDE_LABEL);
      if (value == null || value.equals("None")) {
        continue;
      }
      long blocks = PrometheusText.tokens(value, CACHE_CONFIG + " " + OVERRIDE_LABEL);
      if (override.isEmpty() || blocks < override.getAsLong()) {
        override = OptionalLong.of(blocks);
      }
    }
    return override;
  }

  /**
   * Every data-parallel engine the page mentions must have its own cache_config_info series: an
   * engine seen only in other vllm: metrics has a pool nobody measured.
   */
  static void requireEveryEngineDescribed(
      Set<String> engines, List<PrometheusText.Sample> cacheConfig) throws ProbeException {
    Set<String> described = new HashSet<>();
    cacheConfig.forEach(s -> described.add(s.labels().getOrDefault("engine", "0")));
    for (String engine : engines) {
      if (!described.contains(engine)) {
        throw new ProbeException(
            METRICS
                + " lists data-parallel engine "
                + EngineText.safe(engine)
                + " but no "
                + CACHE_CONFIG
                + " series for it: its pool cannot be measured");
      }
    }
  }

  private String version(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response = http.get(endpoint, VERSION, Reading.json("/version"));
    if (response.status() != 200 || !response.isJson()) {
      return null;
    }
    return EngineText.version(StrictJson.optionalText(StrictJson.parse(response), "version"));
  }
}

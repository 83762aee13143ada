package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;
import static io.kvguard.faults.RawEngine.prometheus;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.VllmProbe;
import io.kvguard.testkit.EngineShapes;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * vLLM in the fault table: the pool is a label of the vllm:cache_config_info info gauge on
 * /metrics.
 */
final class VllmFaultEngine implements FaultEngine {

  @Override
  public String name() {
    return "vllm";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new VllmProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put(
        "/metrics",
        prometheus(metrics(series("0", "2040000", "1.0"), series("1", "2040000", "1.0"))));
    routes.put("/v1/models", RawEngine.of(EngineShapes.models(ProbeFaultTableTest.WINDOW)));
    routes.put("/version", json("{\"version\":\"0.11.0\"}"));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/metrics";
  }

  @Override
  public String poolContentType() {
    return "text/plain; version=0.0.4; charset=utf-8";
  }

  @Override
  public byte[] poolBody() {
    return metrics(series("0", "2040000", "1.0"), series("1", "2040000", "1.0"))
        .getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public Optional<String> contextPath() {
    return Optional.of("/v1/models");
  }

  @Override
  public String wrongContentType() {
    return "application/json";
  }

  /**
   * One cache_config_info line; a null size leaves the kv_cache_size_tokens label out (older
   * builds).
   */
  static String series(String engine, String kvCacheSizeTokens, String value) {
    return "vllm:cache_config_info{block_size=\"64\",cache_dtype=\"auto\",engine=\""
        + engine
        + "\""
        + (kvCacheSizeTokens == null ? "" : ",kv_cache_size_tokens=\"" + kvCacheSizeTokens + "\"")
        + ",num_gpu_blocks=\"63750\",num_gpu_blocks_override=\"None\"} "
        + value
        + "\n";
  }

  static String metrics(String... series) {
    return "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
        + "# TYPE vllm:cache_config_info gauge\n"
        + String.join("", series)
        + "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\",model_name=\"m\"} 0.0\n";
  }

  private Optional<Fault> withMetrics(String body, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/metrics", prometheus(body));
    return Optional.of(new Fault(routes, cause));
  }

  private Optional<Fault> sized(String size0, String size1, String cause) {
    return withMetrics(metrics(series("0", size0, "1.0"), series("1", size1, "1.0")), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    switch (fault) {
      case WRONG_JSON_TYPE:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          routes.put("/v1/models", json("[{\"id\":\"m\",\"max_model_len\":1048576}]"));
          return Optional.of(new Fault(routes, "/v1/models is not a JSON object"));
        }
      case MISSING_POOL:
        return withMetrics(
            metrics("vllm:cache_config_info{block_size=\"64\",engine=\"0\"} 1.0\n"),
            "num_gpu_blocks is missing");
      case NULL_POOL:
        // vLLM writes Python's None into info labels it has no value for.
        return sized("None", "2040000", "kv_cache_size_tokens is not a positive whole number");
      case ZERO_POOL:
        return sized("2040000", "0", "kv_cache_size_tokens is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return sized("-2040000", "2040000", "kv_cache_size_tokens is not a positive whole number");
      case FRACTIONAL_POOL:
        return sized("2040000.5", "2040000", "kv_cache_size_tokens is not a positive whole number");
      case POOL_PAST_2_63:
        return sized(
            "9223372036854775808",
            "2040000",
            "kv_cache_size_tokens is not a positive whole number");
      case NAN:
        return withMetrics(
            metrics(series("0", "2040000", "NaN"), series("1", "2040000", "1.0")),
            "vllm:cache_config_info value is NaN");
      case POSITIVE_INFINITY:
        return sized("+Inf", "2040000", "kv_cache_size_tokens is not a positive whole number");
      case NEGATIVE_INFINITY:
        return withMetrics(
            metrics(series("0", "2040000", "1.0"), series("1", "2040000", "-Inf")),
            "vllm:cache_config_info value is -Infinity");
      case DUPLICATE_SERIES_DISAGREE:
        return withMetrics(
            metrics(series("0", "2040000", "1.0"), series("0", "600000", "1.0")),
            "disagreeing series for engine 0");
      case RANK_MISSING_CAPACITY:
        return sized("2040000", null, "kv_cache_size_tokens is missing");
      case TRUNCATED_CONTENT:
        {
          String whole = metrics(series("0", "2040000", "1.0"), series("1", "600000", "1.0"));
          return withMetrics(whole.substring(0, whole.indexOf("engine=\"1\"") + 8), "malformed");
        }
      case NO_MODELS:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          routes.put("/v1/models", json("{\"object\":\"list\",\"data\":[]}"));
          return Optional.of(new Fault(routes, "/v1/models lists no models"));
        }
      case RANK_ZERO_ONLY:
        // Without kv_cache_size_tokens, num_gpu_blocks is summed across data-parallel engines.
        return sized(null, null, "lacks kv_cache_size_tokens and lists 2 data-parallel engines");
      case RANKS_DISAGREE_WITH_COUNT:
        // Engine 1 serves (it has request metrics) but no cache_config_info series describes its
        // pool.
        return withMetrics(
            metrics(series("0", "2040000", "1.0"))
                + "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 0.0\n",
            "lists data-parallel engine 1 but no vllm:cache_config_info series for it");
      default:
        return Optional.empty();
    }
  }
}

package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;
import static io.kvguard.faults.RawEngine.prometheus;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.TrtllmProbe;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * TensorRT-LLM behind Triton in the fault table: pool = nv_trt_llm_kv_cache_block_metrics "max" ×
 * "tokens_per" on /metrics (31875 × 64), an upper bound of the GPU pool that verifies only with the
 * role's blockCountIsPool declaration. It reports no context length, so only pool rows apply.
 */
final class TrtllmFaultEngine implements FaultEngine {
  static final String BLOCKS = "nv_trt_llm_kv_cache_block_metrics";
  private static final String MAX = BLOCKS + "{kv_cache_block_type=\"max\"}";

  @Override
  public String name() {
    return "trtllm";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new TrtllmProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    return new java.util.LinkedHashMap<>(
        Map.of("/metrics", prometheus(metrics(model("tensorrt_llm", "31875", "64")))));
  }

  @Override
  public boolean needsBlockCountDeclaration() {
    return true;
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
    return metrics(model("tensorrt_llm", "31875", "64")).getBytes(StandardCharsets.UTF_8);
  }

  /** Not JSON: trtllm-serve answers JSON on /metrics, which this probe reads as iteration stats. */
  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  static String series(String type, String model, String value) {
    return BLOCKS
        + "{kv_cache_block_type=\""
        + type
        + "\",model=\""
        + model
        + "\",version=\"1\"} "
        + value
        + "\n";
  }

  /** One model's block series as Triton writes them; a null value leaves that series out. */
  static String model(String model, String maxBlocks, String tokensPer) {
    return series("fraction", model, "0.000160")
        + (tokensPer == null ? "" : series("tokens_per", model, tokensPer))
        + series("used", model, "1")
        + series("free", model, "31874")
        + (maxBlocks == null ? "" : series("max", model, maxBlocks));
  }

  static String metrics(String blockSeries) {
    return "# HELP nv_trt_llm_kv_cache_block_metrics TRT LLM KV cache block metrics\n"
        + "# TYPE nv_trt_llm_kv_cache_block_metrics gauge\n"
        + blockSeries
        + "# TYPE nv_inference_request_success counter\nnv_inference_request_success{model=\"tensorrt_llm\",version=\"1\"} 12\n";
  }

  private Optional<Fault> withMetrics(String blockSeries, String cause) {
    return Optional.of(
        new Fault(
            new java.util.LinkedHashMap<>(Map.of("/metrics", prometheus(metrics(blockSeries)))),
            cause));
  }

  private Optional<Fault> maxBlocks(String value, String cause) {
    return withMetrics(model("tensorrt_llm", value, "64"), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    switch (fault) {
      case WRONG_JSON_TYPE:
        // JSON on /metrics is trtllm-serve's iteration stats list; an object is the wrong type.
        return Optional.of(
            new Fault(
                new java.util.LinkedHashMap<>(
                    Map.of(
                        "/metrics",
                        json("{\"kvCacheStats\":{\"maxNumBlocks\":31875,\"tokensPerBlock\":64}}"))),
                "/metrics answered JSON that is not a list of iteration stats"));
      case MISSING_POOL:
        return withMetrics("", "/metrics has neither nv_trt_llm_kv_cache_block_metrics (Triton)");
      case NULL_POOL:
        return Optional.of(
            new Fault(
                new java.util.LinkedHashMap<>(
                    Map.of(
                        "/metrics",
                        json(
                            "[{\"iter\":41,\"kvCacheStats\":{\"maxNumBlocks\":null,\"tokensPerBlock\":64}}]"))),
                "/metrics[0].kvCacheStats lacks maxNumBlocks"));
      case ZERO_POOL:
        return maxBlocks("0", MAX + " is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return withMetrics(
            model("tensorrt_llm", "31875", "-64"),
            "{kv_cache_block_type=\"tokens_per\"} is -64, expected a positive");
      case FRACTIONAL_POOL:
        return maxBlocks("31875.5", MAX + " is not a whole number");
      case POOL_PAST_2_63:
        // Each factor is exact below 2^53; their product is past 2^63.
        return withMetrics(
            model("tensorrt_llm", "4503599627370495", "4096"),
            "{kv_cache_block_type=\"max\"} × nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=\"tokens_per\"} overflows");
      case NAN:
        return maxBlocks("NaN", MAX + " is NaN");
      case POSITIVE_INFINITY:
        return maxBlocks("+Inf", MAX + " is Infinity");
      case NEGATIVE_INFINITY:
        return maxBlocks("-Inf", MAX + " is -Infinity");
      case DUPLICATE_SERIES_DISAGREE:
        return withMetrics(
            model("tensorrt_llm", "31875", "64") + series("max", "tensorrt_llm", "9375"),
            "/metrics has disagreeing duplicate KV capacity series");
      case RANK_MISSING_CAPACITY:
        return withMetrics(
            model("tensorrt_llm", "31875", "64") + model("draft", null, "64"),
            "do not pair up by labels");
      case TRUNCATED_CONTENT:
        {
          String whole = metrics(model("tensorrt_llm", "31875", "64"));
          return Optional.of(
              new Fault(
                  new java.util.LinkedHashMap<>(
                      Map.of(
                          "/metrics",
                          prometheus(
                              whole.substring(
                                  0, whole.lastIndexOf("kv_cache_block_type=\"max\"") + 22)))),
                  "malformed"));
        }
      default:
        return Optional.empty();
    }
  }
}

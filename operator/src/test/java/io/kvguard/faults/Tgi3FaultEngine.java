package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;
import static io.kvguard.faults.RawEngine.prometheus;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.TgiProbe;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * TGI 2.3.1 and later in the fault table: the pool is the tgi_batch_max_total_tokens gauge, the
 * context in /info.
 */
final class Tgi3FaultEngine implements FaultEngine {
  static final String GAUGE = "tgi_batch_max_total_tokens";

  @Override
  public String name() {
    return "tgi-3";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new TgiProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put("/info", json(info("1048576")));
    routes.put("/metrics", prometheus(metrics(GAUGE + " 2040000\n")));
    routes.put("/health", json("{}"));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/metrics";
  }

  @Override
  public Optional<String> contextPath() {
    return Optional.of("/info");
  }

  @Override
  public String poolContentType() {
    return "text/plain; version=0.0.4; charset=utf-8";
  }

  @Override
  public byte[] poolBody() {
    return metrics(GAUGE + " 2040000\n").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "application/json";
  }

  /**
   * TGI 3.x /info (no pool field); the argument is a JSON literal, or {@link JsonLiterals#OMIT}.
   */
  static String info(String maxTotalTokens) {
    return "{\"model_id\":\"meta-llama/Llama-3.1-8B-Instruct\",\"model_sha\":\"0e9e39f2\","
        + "\"model_pipeline_tag\":\"text-generation\",\"max_concurrent_requests\":128,\"max_best_of\":2,"
        + "\"max_stop_sequences\":4,\"max_input_tokens\":1048575,"
        + JsonLiterals.field("max_total_tokens", maxTotalTokens)
        + "\"validation_workers\":2,\"max_client_batch_size\":4,\"router\":\"text-generation-router\","
        + "\"version\":\"3.0.1\",\"sha\":\"b70f29d\",\"docker_label\":\"sha-b70f29d\"}";
  }

  /** A TGI 3.x metrics page around the given pool gauge lines. */
  static String metrics(String gaugeLines) {
    return "# HELP tgi_queue_size Current queue size\n# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n"
        + "# HELP tgi_batch_current_size Current batch size\n# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 0\n"
        + "# HELP tgi_batch_max_total_tokens Maximum amount of tokens in total.\n# TYPE tgi_batch_max_total_tokens gauge\n"
        + gaugeLines
        + "# TYPE tgi_request_count counter\ntgi_request_count{method=\"POST\"} 3\n";
  }

  private Optional<Fault> withMetrics(String gaugeLines, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/metrics", prometheus(metrics(gaugeLines)));
    return Optional.of(new Fault(routes, cause));
  }

  private Optional<Fault> gauge(String value, String cause) {
    return withMetrics(GAUGE + " " + value + "\n", cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    switch (fault) {
      case WRONG_JSON_TYPE:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          routes.put("/info", json("[" + info("1048576") + "]"));
          return Optional.of(new Fault(routes, "/info is not a JSON object"));
        }
      case MISSING_POOL:
        return withMetrics("", "TGI reports its pool neither as /info max_batch_total_tokens");
      case NULL_POOL:
        return gauge("", "is malformed: no value");
      case ZERO_POOL:
        return gauge(
            "0", "/metrics tgi_batch_max_total_tokens is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return gauge(
            "-2040000",
            "/metrics tgi_batch_max_total_tokens is -2040000, expected a positive token count");
      case FRACTIONAL_POOL:
        return gauge("2040000.5", "/metrics tgi_batch_max_total_tokens is not a whole number");
      case POOL_PAST_2_63:
        return gauge(
            "9223372036854775808", "/metrics tgi_batch_max_total_tokens is too large to be exact");
      case NAN:
        return gauge("NaN", "/metrics tgi_batch_max_total_tokens is NaN");
      case POSITIVE_INFINITY:
        return gauge("+Inf", "/metrics tgi_batch_max_total_tokens is Infinity");
      case NEGATIVE_INFINITY:
        return gauge("-Inf", "/metrics tgi_batch_max_total_tokens is -Infinity");
      case DUPLICATE_SERIES_DISAGREE:
        return withMetrics(
            GAUGE + " 2040000\n" + GAUGE + " 600000\n",
            "/metrics has 2 tgi_batch_max_total_tokens series");
      case TRUNCATED_CONTENT:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          String whole = metrics(GAUGE + " 2040000\n");
          routes.put("/metrics", prometheus(whole.substring(0, whole.lastIndexOf(GAUGE) + 12)));
          return Optional.of(new Fault(routes, "malformed: no value"));
        }
      case NO_MODELS:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          routes.put("/info", json(info(JsonLiterals.OMIT)));
          return Optional.of(new Fault(routes, "/info reports no max_total_tokens"));
        }
      default:
        return Optional.empty();
    }
  }
}

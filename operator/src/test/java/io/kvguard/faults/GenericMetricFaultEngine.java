package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;
import static io.kvguard.faults.RawEngine.prometheus;

import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.GenericProbe;
import io.kvguard.testkit.EngineShapes;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The generic probe reading a Prometheus metric in the fault table: pool = the smallest
 * inhouse_kv_capacity_blocks{model="m"} series on /metrics × 16 (one series per rank, a draft
 * model's series excluded by the matcher); engine context from /v1/models at /data/0/max_model_len.
 */
final class GenericMetricFaultEngine implements FaultEngine {
  static final String METRIC = "inhouse_kv_capacity_blocks";

  @Override
  public String name() {
    return "generic-metric";
  }

  static GenericProbeSpec spec() {
    GenericProbeSpec spec = new GenericProbeSpec();
    spec.setPath("/metrics");
    GenericValueSource pool = new GenericValueSource();
    pool.setMetric(METRIC);
    pool.setLabels(Map.of("model", "m"));
    pool.setMultiplier(GenericJsonFaultEngine.BLOCK_SIZE);
    spec.setPool(pool);
    GenericValueSource context = GenericJsonFaultEngine.pointer("/data/0/max_model_len", 1);
    context.setPath("/v1/models");
    spec.setEngineContext(context);
    return spec;
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new GenericProbe(http, spec());
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put("/metrics", prometheus(metrics(rank("0", "127500") + rank("1", "131072"))));
    routes.put("/v1/models", RawEngine.of(EngineShapes.models(ProbeFaultTableTest.WINDOW)));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/metrics";
  }

  @Override
  public Optional<String> contextPath() {
    return Optional.of("/v1/models");
  }

  @Override
  public String poolContentType() {
    return "text/plain; version=0.0.4; charset=utf-8";
  }

  @Override
  public byte[] poolBody() {
    return metrics(rank("0", "127500") + rank("1", "131072")).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "application/json";
  }

  static String rank(String rank, String value) {
    return METRIC + "{model=\"m\",rank=\"" + rank + "\"} " + value + "\n";
  }

  static String metrics(String rankSeries) {
    return "# TYPE inhouse_kv_capacity_blocks gauge\n"
        + rankSeries
        + METRIC
        + "{model=\"draft\",rank=\"0\"} 256\n"
        + "# TYPE inhouse_requests_running gauge\ninhouse_requests_running{model=\"m\"} 0\n";
  }

  private Optional<Fault> withMetrics(String rankSeries, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/metrics", prometheus(metrics(rankSeries)));
    return Optional.of(new Fault(routes, cause));
  }

  private Optional<Fault> rankZero(String value, String cause) {
    return withMetrics(rank("0", value) + rank("1", "131072"), cause);
  }

  private Optional<Fault> withModels(String body, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/v1/models", json(body));
    return Optional.of(new Fault(routes, cause));
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    String series = "GET /metrics metric " + METRIC + "{model=m}";
    switch (fault) {
      case WRONG_JSON_TYPE:
        return withModels(
            "[{\"id\":\"m\",\"max_model_len\":1048576}]",
            "GET /v1/models JSON pointer /data/0/max_model_len matches nothing");
      case MISSING_POOL:
        return withMetrics("", series + " matches no series");
      case NULL_POOL:
        return rankZero("", "is malformed: no value");
      case ZERO_POOL:
        return rankZero("0", series + " is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return rankZero("-127500", series + " is -127500, expected a positive token count");
      case FRACTIONAL_POOL:
        return rankZero("127500.5", series + " is not a whole number");
      case POOL_PAST_2_63:
        return rankZero("9223372036854775808", series + " is too large to be exact");
      case NAN:
        return rankZero("NaN", series + " is NaN");
      case POSITIVE_INFINITY:
        return rankZero("+Inf", series + " is Infinity");
      case NEGATIVE_INFINITY:
        return rankZero("-Inf", series + " is -Infinity");
      case DUPLICATE_SERIES_DISAGREE:
        return withMetrics(
            rank("0", "127500") + rank("0", "37500") + rank("1", "131072"),
            series + " has duplicate series that disagree");
      case TRUNCATED_CONTENT:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          String whole = metrics(rank("0", "127500") + rank("1", "131072"));
          routes.put("/metrics", prometheus(whole.substring(0, whole.indexOf("rank=\"1") + 7)));
          return Optional.of(new Fault(routes, "malformed"));
        }
      case NO_MODELS:
        return withModels(
            "{\"object\":\"list\",\"data\":[]}",
            "GET /v1/models JSON pointer /data/0/max_model_len matches nothing");
      default:
        return Optional.empty();
    }
  }
}

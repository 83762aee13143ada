package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.SglangProbe;
import io.kvguard.testkit.EngineShapes;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * SGLang in the fault table: the pool is in /server_info JSON, one token_capacity per data-parallel
 * rank.
 */
final class SglangFaultEngine implements FaultEngine {
  static final long POOL = 2_040_000;
  private static final String OMIT = "<omit>";

  @Override
  public String name() {
    return "sglang";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new SglangProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put("/server_info", json(info("2040000", "2040000", "2040000", "2")));
    routes.put("/v1/models", RawEngine.of(EngineShapes.models(ProbeFaultTableTest.WINDOW)));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/server_info";
  }

  @Override
  public String poolContentType() {
    return "application/json";
  }

  @Override
  public byte[] poolBody() {
    return info("2040000", "2040000", "2040000", "2").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public Optional<String> contextPath() {
    return Optional.of("/v1/models");
  }

  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  /**
   * A two-rank prefill /server_info as SGLang 0.5.x writes it (api_key included). Arguments are
   * JSON literals dropped in verbatim, or {@link #OMIT} to leave the field out.
   */
  static String info(String capacity0, String capacity1, String maxTotal, String dpSize) {
    return "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":1048576,\"disaggregation_mode\":\"prefill\","
        + field("dp_size", dpSize)
        + "\"tp_size\":8,\"dcp_size\":1,\"page_size\":64,\"api_key\":\""
        + EngineShapes.SECRET_API_KEY
        + "\","
        + field("max_total_num_tokens", maxTotal)
        + "\"max_req_input_len\":1048570,\"status\":\"ready\","
        + "\"version\":\"0.5.22\",\"internal_states\":["
        + rank(capacity0)
        + ","
        + rank(capacity1)
        + "]}";
  }

  private static String field(String name, String literal) {
    return OMIT.equals(literal) ? "" : "\"" + name + "\":" + literal + ",";
  }

  private static String rank(String capacity) {
    return "{\"memory_usage\":{\"weight\":88.1,\"kvcache\":41.3,"
        + field("token_capacity", capacity)
        + "\"graph\":1.2},\"last_gen_throughput\":0.0}";
  }

  private Optional<Fault> serverInfo(String body, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/server_info", json(body));
    return Optional.of(new Fault(routes, cause));
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    switch (fault) {
      case WRONG_JSON_TYPE:
        return serverInfo(
            info("\"2040000\"", "\"2040000\"", "2040000", "2"),
            "token_capacity is not a number (string)");
      case MISSING_POOL:
        return serverInfo(
            info(OMIT, OMIT, OMIT, "2"),
            "no internal_states[].memory_usage.token_capacity and no max_total_num_tokens");
      case NULL_POOL:
        return serverInfo(
            info("null", "null", "null", "2"),
            "no internal_states[].memory_usage.token_capacity and no max_total_num_tokens");
      case ZERO_POOL:
        return serverInfo(
            info("0", "2040000", "2040000", "2"),
            "token_capacity is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return serverInfo(
            info("2040000", "-2040000", "2040000", "2"),
            "token_capacity is -2040000, expected a positive token count");
      case FRACTIONAL_POOL:
        return serverInfo(
            info("2040000.5", "2040000", "2040000", "2"), "token_capacity is not a whole number");
      case POOL_PAST_2_63:
        return serverInfo(
            info("9223372036854775808", "2040000", "2040000", "2"),
            "token_capacity is larger than 2^63");
      case NAN:
        // Python's json.dumps writes NaN and Infinity unless told not to; they are not JSON.
        return serverInfo(info("NaN", "2040000", "2040000", "2"), "malformed JSON");
      case POSITIVE_INFINITY:
        return serverInfo(info("2040000", "Infinity", "2040000", "2"), "malformed JSON");
      case NEGATIVE_INFINITY:
        return serverInfo(info("-Infinity", "2040000", "2040000", "2"), "malformed JSON");
      case DUPLICATE_SERIES_DISAGREE:
        return serverInfo(
            info("2040000,\"token_capacity\":600000", "2040000", "2040000", "2"),
            "a key appears twice");
      case RANK_MISSING_CAPACITY:
        return serverInfo(
            info("2040000", OMIT, "2040000", "2"),
            "only 1 of 2 internal_states ranks report memory_usage.token_capacity");
      case TRUNCATED_CONTENT:
        {
          String whole = info("2040000", "2040000", "2040000", "2");
          return serverInfo(
              whole.substring(0, whole.indexOf("\"internal_states\"") + 40), "malformed JSON");
        }
      case NO_MODELS:
        {
          Map<String, RawEngine.Behaviour> routes = healthy();
          routes.put("/v1/models", json("{\"object\":\"list\",\"data\":[]}"));
          return Optional.of(new Fault(routes, "/v1/models lists no models"));
        }
      case RANKS_DISAGREE_WITH_COUNT:
        return serverInfo(
            info("2040000", "2040000", "2040000", "4"),
            "internal_states lists 2 ranks but dp_size is 4");
      case RANK_ZERO_ONLY:
        return serverInfo(
            info(OMIT, OMIT, "2040000", "2"),
            "reports only max_total_num_tokens (rank 0) for 2 data-parallel ranks");
      default:
        return Optional.empty();
    }
  }
}

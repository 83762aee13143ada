package io.kvguard.faults;

import static io.kvguard.faults.JsonLiterals.OMIT;
import static io.kvguard.faults.JsonLiterals.field;
import static io.kvguard.faults.RawEngine.json;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.TgiProbe;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * TGI 2.2 and older in the fault table: pool and engine context both in /info JSON; no /metrics
 * gauge.
 */
final class Tgi22FaultEngine implements FaultEngine {

  @Override
  public String name() {
    return "tgi-2.2";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new TgiProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    Map<String, RawEngine.Behaviour> routes = new LinkedHashMap<>();
    routes.put("/info", json(info("1048576", "2040000")));
    routes.put("/health", json("{}"));
    return routes;
  }

  @Override
  public String poolPath() {
    return "/info";
  }

  @Override
  public String poolContentType() {
    return "application/json";
  }

  @Override
  public byte[] poolBody() {
    return info("1048576", "2040000").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  /**
   * TGI 2.2's /info; arguments are JSON literals dropped in verbatim, or {@link JsonLiterals#OMIT}.
   */
  static String info(String maxTotalTokens, String maxBatchTotalTokens) {
    return "{\"model_id\":\"meta-llama/Llama-3.1-8B-Instruct\",\"model_sha\":\"0e9e39f2\",\"model_dtype\":\"torch.float16\","
        + "\"model_device_type\":\"cuda\",\"model_pipeline_tag\":\"text-generation\",\"max_concurrent_requests\":128,"
        + "\"max_best_of\":2,\"max_stop_sequences\":4,\"max_input_tokens\":1048575,"
        + field("max_total_tokens", maxTotalTokens)
        + "\"waiting_served_ratio\":0.3,"
        + field("max_batch_total_tokens", maxBatchTotalTokens)
        + "\"max_waiting_tokens\":20,\"max_batch_size\":null,"
        + "\"validation_workers\":2,\"max_client_batch_size\":4,\"router\":\"text-generation-router\","
        + "\"version\":\"2.2.0\",\"sha\":\"6d7e3d6\",\"docker_label\":\"sha-6d7e3d6\"}";
  }

  private Optional<Fault> withInfo(String body, String cause) {
    Map<String, RawEngine.Behaviour> routes = healthy();
    routes.put("/info", json(body));
    return Optional.of(new Fault(routes, cause));
  }

  private Optional<Fault> pool(String literal, String cause) {
    return withInfo(info("1048576", literal), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    switch (fault) {
      case WRONG_JSON_TYPE:
        return pool("\"2040000\"", "/info.max_batch_total_tokens is not a number (string)");
      case MISSING_POOL:
        // Without the 2.2 field the probe looks for the 2.3.1 gauge, which a 2.2 server does not
        // serve.
        return pool(
            OMIT,
            "/info reports no max_batch_total_tokens (TGI 2.2 and older) and GET /metrics answered HTTP 404");
      case NULL_POOL:
        return pool(
            "null",
            "/info reports no max_batch_total_tokens (TGI 2.2 and older) and GET /metrics answered HTTP 404");
      case ZERO_POOL:
        return pool("0", "/info.max_batch_total_tokens is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return pool(
            "-2040000",
            "/info.max_batch_total_tokens is -2040000, expected a positive token count");
      case FRACTIONAL_POOL:
        return pool("2040000.5", "/info.max_batch_total_tokens is not a whole number");
      case POOL_PAST_2_63:
        return pool("9223372036854775808", "/info.max_batch_total_tokens is larger than 2^63");
      case NAN:
        return pool("NaN", "malformed JSON");
      case POSITIVE_INFINITY:
        return pool("Infinity", "malformed JSON");
      case NEGATIVE_INFINITY:
        return pool("-Infinity", "malformed JSON");
      case DUPLICATE_SERIES_DISAGREE:
        return pool("2040000,\"max_batch_total_tokens\":600000", "a key appears twice");
      case TRUNCATED_CONTENT:
        {
          String whole = info("1048576", "2040000");
          return withInfo(
              whole.substring(0, whole.indexOf("max_batch_total_tokens") + 26), "malformed JSON");
        }
      case NO_MODELS:
        return withInfo(info(OMIT, "2040000"), "/info reports no max_total_tokens");
      default:
        return Optional.empty();
    }
  }
}

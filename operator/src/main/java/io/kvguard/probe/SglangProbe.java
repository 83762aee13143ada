package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * SGLang: the pool is the smallest {@code internal_states[i].memory_usage.token_capacity} over all
 * data-parallel ranks of {@code /server_info} (older builds: {@code /get_server_info}); the
 * top-level {@code max_total_num_tokens} (rank 0 only) is used only when no rank reports a
 * capacity.
 */
public final class SglangProbe implements EngineProbe {
  static final String SERVER_INFO = "/server_info";
  static final String LEGACY_SERVER_INFO = "/get_server_info";

  /**
   * What the probe reads of /server_info: the ranks' capacities (a list, or one object), and four
   * fields.
   */
  static final Reading SERVER_INFO_READING =
      Reading.json(
          "/internal_states/*/memory_usage/token_capacity",
          "/internal_states/memory_usage/token_capacity",
          "/dp_size",
          "/max_total_num_tokens",
          "/version",
          "/disaggregation_mode");

  private final EngineHttp http;

  public SglangProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.SGLANG;
  }

  @Override
  public java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.of(new SglangRejection());
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    JsonNode info = serverInfo(endpoint);
    List<String> notes = new ArrayList<>();
    long pool = pool(info, notes);
    OptionalLong engineContext = OpenAiModels.maxModelLen(http, endpoint);
    if (engineContext.isEmpty()) {
      // Both engines always report it; without it the over-pool rejection path cannot be ruled out.
      throw new ProbeException(
          "/v1/models reports no max_model_len: the engine's own context length is unknown");
    }
    String mode = StrictJson.optionalText(info, "disaggregation_mode");
    String disaggregation = mode == null || mode.equals("null") ? null : EngineText.safe(mode);
    return ProbeOutcome.observed(
        new PoolObservation(
            pool,
            engineContext,
            EngineText.version(StrictJson.optionalText(info, "version")),
            disaggregation,
            notes));
  }

  private JsonNode serverInfo(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response = http.get(endpoint, SERVER_INFO, SERVER_INFO_READING);
    if (response.status() == 404) {
      response = http.getOk(endpoint, LEGACY_SERVER_INFO, SERVER_INFO_READING);
    } else if (response.status() != 200) {
      response = http.getOk(endpoint, SERVER_INFO, SERVER_INFO_READING);
    }
    return StrictJson.requireObject(StrictJson.parse(response), response.path());
  }

  static long pool(JsonNode info, List<String> notes) throws ProbeException {
    JsonNode states = info.get("internal_states");
    List<JsonNode> ranks = new ArrayList<>();
    if (states != null && states.isArray()) {
      states.forEach(ranks::add);
    } else if (states != null && states.isObject()) {
      ranks.add(states);
    } else if (states != null && !states.isNull()) {
      throw new ProbeException("internal_states is neither a list nor an object");
    }
    OptionalLong smallest = OptionalLong.empty();
    int reporting = 0;
    for (int rank = 0; rank < ranks.size(); rank++) {
      JsonNode usage = ranks.get(rank).get("memory_usage");
      if (usage != null && !usage.isNull() && !usage.isObject()) {
        throw new ProbeException("internal_states[" + rank + "].memory_usage is not a JSON object");
      }
      OptionalLong capacity =
          StrictJson.optionalTokens(
              usage, "token_capacity", "internal_states[" + rank + "].memory_usage");
      if (capacity.isEmpty()) {
        continue;
      }
      reporting++;
      if (smallest.isEmpty() || capacity.getAsLong() < smallest.getAsLong()) {
        smallest = capacity;
      }
    }
    if (reporting > 0 && reporting < ranks.size()) {
      throw new ProbeException(
          "only "
              + reporting
              + " of "
              + ranks.size()
              + " internal_states ranks report memory_usage.token_capacity");
    }
    OptionalLong dpSize = StrictJson.optionalTokens(info, "dp_size", "server_info");
    if (dpSize.isEmpty()) {
      // SGLang dumps every server argument, dp_size included; without it a dropped rank would go
      // unseen.
      throw new ProbeException(
          "server_info reports no dp_size: the number of data-parallel ranks is unknown");
    }
    if (reporting > 0 && dpSize.getAsLong() > 1 && ranks.size() != dpSize.getAsLong()) {
      throw new ProbeException(
          "internal_states lists " + ranks.size() + " ranks but dp_size is " + dpSize.getAsLong());
    }
    if (smallest.isPresent()) {
      if (ranks.size() > 1) {
        notes.add("pool is the smallest of " + ranks.size() + " data-parallel ranks");
      }
      return smallest.getAsLong();
    }
    OptionalLong rankZero = StrictJson.optionalTokens(info, "max_total_num_tokens", "server_info");
    if (rankZero.isEmpty()) {
      throw new ProbeException(
          "server_info reports no internal_states[].memory_usage.token_capacity"
              + " and no max_total_num_tokens");
    }
    long rankCount = Math.max(ranks.size(), dpSize.getAsLong());
    if (rankCount > 1) {
      // max_total_num_tokens describes rank 0 only; with more ranks a smaller one would go unseen.
      throw new ProbeException(
          "server_info reports only max_total_num_tokens (rank 0) for "
              + rankCount
              + " data-parallel ranks: the other ranks' pools cannot be measured");
    }
    notes.add("pool from max_total_num_tokens: rank 0 only, other data-parallel ranks unverified");
    return rankZero.getAsLong();
  }
}

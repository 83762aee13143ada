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
 * capacity. Under decode context parallelism the figure is the pool the scheduler admits against
 * ({@link SglangDcpPool}); the Rust front end's /server_info proves neither the rank count nor the
 * mode and fails the probe ({@link #RUST_FRONT_END}).
 */
public final class SglangProbe implements EngineProbe {
  static final String SERVER_INFO = "/server_info";
  static final String LEGACY_SERVER_INFO = "/get_server_info";

  /**
   * What the probe reads of /server_info: the ranks' capacities (a list, or one object), six
   * fields, and the field only the Rust front end serves ({@code max_context_length}), which tells
   * its answer apart.
   */
  static final Reading SERVER_INFO_READING =
      Reading.json(
          "/internal_states/*/memory_usage/token_capacity",
          "/internal_states/memory_usage/token_capacity",
          "/dp_size",
          "/dcp_size",
          "/tp_size",
          "/max_total_num_tokens",
          "/version",
          "/disaggregation_mode",
          "/max_context_length");

  /**
   * SGLang's Rust front end ({@code SGLANG_RUST_SERVER=1}, 0.5.17 and later) answers /server_info
   * from an allowlist: {@code model_path}, {@code served_model_name}, {@code tokenizer_path},
   * {@code max_context_length}, {@code max_total_num_tokens}, {@code version} and one {@code
   * internal_states} entry, never {@code dp_size}, {@code dcp_size} or {@code disaggregation_mode}
   * ({@code rust/sglang-server/src/api_server/common.rs} {@code shape_server_info}, v0.5.18). With
   * data parallelism each rank runs its own front end on port + rank ({@code
   * python/sglang/srt/managers/rust_server.py}), and nothing it serves ({@code /server_info},
   * {@code /model_info}, {@code /v1/models}) names the rank count or the prefill/decode mode.
   */
  static final String RUST_FRONT_END =
      "server_info has the shape of SGLang's Rust front end (SGLANG_RUST_SERVER=1, 0.5.17 and"
          + " later: max_context_length and no dp_size), which serves no dp_size, dcp_size or"
          + " disaggregation_mode and, with data parallelism, answers for one rank per HTTP port:"
          + " the number of ranks, the decode-context-parallel size and the prefill/decode mode"
          + " cannot be proven. Run the engine without SGLANG_RUST_SERVER (the Python HTTP server"
          + " reports all three) for kvguard to open the gate";

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
    String version = EngineText.version(StrictJson.optionalText(info, "version"));
    long pool = pool(info, version, notes);
    OptionalLong engineContext = OpenAiModels.maxModelLen(http, endpoint);
    if (engineContext.isEmpty()) {
      // SGLang reports it from 0.4.4.post3 (PR #4809, http_server.py available_models); without it
      // the over-pool rejection path cannot be ruled out.
      throw new ProbeException(
          "/v1/models reports no max_model_len (SGLang reports it from 0.4.4.post3): the engine's"
              + " own context length is unknown");
    }
    String mode = StrictJson.optionalText(info, "disaggregation_mode");
    String disaggregation = mode == null || mode.equals("null") ? null : EngineText.safe(mode);
    return ProbeOutcome.observed(
        new PoolObservation(pool, engineContext, version, disaggregation, notes));
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

  /**
   * The smallest pool over the ranks, as the scheduler admits against it ({@link SglangDcpPool}).
   *
   * @param version the engine's reported version (sanitised), or null
   */
  static long pool(JsonNode info, String version, List<String> notes) throws ProbeException {
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
    if (dpSize.isEmpty() && info.has("max_context_length")) {
      throw new ProbeException(RUST_FRONT_END);
    }
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
      return SglangDcpPool.admitted(smallest.getAsLong(), info, version, notes);
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
    return SglangDcpPool.admitted(rankZero.getAsLong(), info, version, notes);
  }
}

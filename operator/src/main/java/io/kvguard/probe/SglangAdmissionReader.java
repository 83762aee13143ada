package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.SglangAdmission;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Reads what SGLang's admission checks depend on from {@code /server_info} (SGLang dumps every
 * server argument there, merged with the scheduler's {@code max_req_input_len}: v0.5.18 {@code
 * entrypoints/http_server.py:805-825}, {@code managers/scheduler.py:1643-1655}). A field that is
 * absent or of the wrong kind is read as unknown; {@link SglangAdmission#paths} decides what that
 * means.
 */
final class SglangAdmissionReader {
  static final Reading ADMISSION_READING =
      Reading.json(
          "/max_req_input_len",
          "/allow_auto_truncate",
          "/speculative_algorithm",
          "/speculative_adaptive",
          "/speculative_eagle_topk",
          "/speculative_num_steps",
          "/speculative_num_draft_tokens",
          "/dcp_size",
          "/max_total_num_tokens",
          "/disaggregation_bootstrap_port",
          "/version");

  private SglangAdmissionReader() {}

  /**
   * A worker's admission figures and, for a prefill worker, the port its bootstrap server listens
   * on ({@code disaggregation_bootstrap_port}, a server argument: v0.5.18 {@code
   * server_args.py:3114-3118}), which a router must be told when the worker is added to it.
   */
  record Worker(SglangAdmission admission, OptionalLong bootstrapPort) {}

  static SglangAdmission read(EngineHttp http, EngineEndpoint endpoint, long contextTokens)
      throws ProbeException {
    return readWorker(http, endpoint, contextTokens).admission();
  }

  static Worker readWorker(EngineHttp http, EngineEndpoint endpoint, long contextTokens)
      throws ProbeException {
    EngineResponse response = http.get(endpoint, SglangProbe.SERVER_INFO, ADMISSION_READING);
    if (response.status() == 404) {
      response = http.getOk(endpoint, SglangProbe.LEGACY_SERVER_INFO, ADMISSION_READING);
    } else if (response.status() != 200) {
      response = http.getOk(endpoint, SglangProbe.SERVER_INFO, ADMISSION_READING);
    }
    JsonNode info = StrictJson.requireObject(StrictJson.parse(response), response.path());
    OptionalLong bootstrapPort = positive(info, "disaggregation_bootstrap_port");
    SglangAdmission admission =
        new SglangAdmission(
            contextTokens,
            EngineText.version(StrictJson.optionalText(info, "version")),
            positive(info, "max_req_input_len"),
            bool(info, "allow_auto_truncate"),
            algorithm(info),
            bool(info, "speculative_adaptive"),
            positive(info, "speculative_eagle_topk"),
            positive(info, "speculative_num_steps"),
            positive(info, "speculative_num_draft_tokens"),
            positive(info, "dcp_size"),
            positive(info, "max_total_num_tokens"));
    return new Worker(
        admission,
        bootstrapPort.isPresent() && bootstrapPort.getAsLong() <= 65535
            ? bootstrapPort
            : OptionalLong.empty());
  }

  /** A positive integer, or empty: garbage counts as unknown, never as a figure. */
  private static OptionalLong positive(JsonNode info, String field) {
    JsonNode value = info.get(field);
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
      return OptionalLong.empty();
    }
    long number = value.asLong();
    return number > 0 ? OptionalLong.of(number) : OptionalLong.empty();
  }

  private static Optional<Boolean> bool(JsonNode info, String field) {
    JsonNode value = info.get(field);
    return value != null && value.isBoolean() ? Optional.of(value.asBoolean()) : Optional.empty();
  }

  /** The algorithm's name, upper case, or null for none (absent, JSON null, or "null"). */
  private static String algorithm(JsonNode info) {
    JsonNode value = info.get("speculative_algorithm");
    if (value == null || value.isNull()) {
      return null;
    }
    String text = EngineText.safe(value.asText());
    return text.isBlank() || text.equals("null") ? null : text.toUpperCase(java.util.Locale.ROOT);
  }
}

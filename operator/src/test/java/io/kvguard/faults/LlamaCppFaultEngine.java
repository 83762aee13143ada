package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.LlamaCppProbe;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * llama.cpp server in the fault table: /props default_generation_settings.n_ctx is pool and context
 * of one slot.
 */
final class LlamaCppFaultEngine implements FaultEngine {

  @Override
  public String name() {
    return "llamacpp";
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new LlamaCppProbe(http);
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    return new LinkedHashMap<>(Map.of("/props", json(props(settings("2040000")))));
  }

  @Override
  public String poolPath() {
    return "/props";
  }

  @Override
  public String poolContentType() {
    return "application/json";
  }

  @Override
  public byte[] poolBody() {
    return props(settings("2040000")).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  /**
   * default_generation_settings with the given n_ctx JSON literal ({@link JsonLiterals#OMIT} leaves
   * it out).
   */
  static String settings(String nCtx) {
    return "{\"id\":0,\"id_task\":-1,"
        + JsonLiterals.field("n_ctx", nCtx)
        + "\"speculative\":false,"
        + "\"is_processing\":false,\"params\":{\"n_predict\":-1,\"seed\":4294967295,\"temperature\":0.8,\"top_k\":40},"
        + "\"prompt\":\"\",\"next_token\":{\"has_next_token\":true,\"n_remain\":-1,\"n_decoded\":0}}";
  }

  /** A 2025 build's /props around the given default_generation_settings JSON literal. */
  static String props(String settings) {
    return "{\"default_generation_settings\":"
        + settings
        + ",\"total_slots\":4,"
        + "\"model_path\":\"/models/Qwen3-8B-Q4_K_M.gguf\",\"modalities\":{\"vision\":false,\"audio\":false},"
        + "\"chat_template\":\"{%- for message in messages %}{{ message.content }}{%- endfor %}\","
        + "\"bos_token\":\"<|endoftext|>\",\"eos_token\":\"<|im_end|>\",\"build_info\":\"b6123-4f1c9e2\"}";
  }

  private static Optional<Fault> withProps(String body, String cause) {
    return Optional.of(new Fault(new LinkedHashMap<>(Map.of("/props", json(body))), cause));
  }

  private static Optional<Fault> nCtx(String literal, String cause) {
    return withProps(props(settings(literal)), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    String field = "/props default_generation_settings.n_ctx";
    switch (fault) {
      case WRONG_JSON_TYPE:
        return nCtx("\"2040000\"", field + " is not a number (string)");
      case MISSING_POOL:
        return nCtx(JsonLiterals.OMIT, "/props reports no default_generation_settings.n_ctx");
      case NULL_POOL:
        return nCtx("null", "/props reports no default_generation_settings.n_ctx");
      case ZERO_POOL:
        return nCtx("0", field + " is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return nCtx("-2040000", field + " is -2040000, expected a positive token count");
      case FRACTIONAL_POOL:
        return nCtx("2040000.5", field + " is not a whole number");
      case POOL_PAST_2_63:
        return nCtx("9223372036854775808", field + " is larger than 2^63");
      case NAN:
        return nCtx("NaN", "malformed JSON");
      case POSITIVE_INFINITY:
        return nCtx("Infinity", "malformed JSON");
      case NEGATIVE_INFINITY:
        return nCtx("-Infinity", "malformed JSON");
      case DUPLICATE_SERIES_DISAGREE:
        return nCtx("2040000,\"n_ctx\":600000", "a key appears twice");
      case TRUNCATED_CONTENT:
        {
          String whole = props(settings("2040000"));
          return withProps(whole.substring(0, whole.indexOf("n_ctx") + 10), "malformed JSON");
        }
      case NO_MODELS:
        // No settings object: neither the slot's context nor its pool is known.
        return withProps(props("null"), "/props has no default_generation_settings object");
      default:
        return Optional.empty();
    }
  }
}

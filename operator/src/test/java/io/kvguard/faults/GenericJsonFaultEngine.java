package io.kvguard.faults;

import static io.kvguard.faults.RawEngine.json;

import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.customresource.GenericVersionSource;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.GenericProbe;
import io.kvguard.testkit.EngineShapes;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The generic probe reading JSON pointers in the fault table: an in-house engine's /stats, pool =
 * /engine/kv/capacity_blocks × 16, context /engine/limits/max_prompt, version /engine/version.
 */
final class GenericJsonFaultEngine implements FaultEngine {
  static final long BLOCK_SIZE = 16;

  @Override
  public String name() {
    return "generic-json";
  }

  static GenericValueSource pointer(String pointer, long multiplier) {
    GenericValueSource source = new GenericValueSource();
    source.setJsonPointer(pointer);
    source.setMultiplier(multiplier);
    return source;
  }

  static GenericProbeSpec spec() {
    GenericProbeSpec spec = new GenericProbeSpec();
    spec.setPath("/stats");
    spec.setPool(pointer("/engine/kv/capacity_blocks", BLOCK_SIZE));
    spec.setEngineContext(pointer("/engine/limits/max_prompt", 1));
    GenericVersionSource version = new GenericVersionSource();
    version.setJsonPointer("/engine/version");
    spec.setVersion(version);
    return spec;
  }

  @Override
  public EngineProbe probe(EngineHttp http) {
    return new GenericProbe(http, spec());
  }

  @Override
  public Map<String, RawEngine.Behaviour> healthy() {
    return new LinkedHashMap<>(Map.of("/stats", json(stats("127500", "1048576"))));
  }

  @Override
  public String poolPath() {
    return "/stats";
  }

  @Override
  public String poolContentType() {
    return "application/json";
  }

  @Override
  public byte[] poolBody() {
    return stats("127500", "1048576").getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String wrongContentType() {
    return "text/html; charset=utf-8";
  }

  /** The engine's /stats; arguments are JSON literals, or {@link JsonLiterals#OMIT}. */
  static String stats(String capacityBlocks, String maxPrompt) {
    return "{\"engine\":{\"version\":\"1.4.2\",\"kv\":{"
        + JsonLiterals.field("capacity_blocks", capacityBlocks)
        + "\"block_size\":16},\"limits\":{"
        + JsonLiterals.field("max_prompt", maxPrompt)
        + "\"max_batch\":64}},"
        + "\"api_key\":\""
        + EngineShapes.SECRET_API_KEY
        + "\"}";
  }

  private static Optional<Fault> withStats(String body, String cause) {
    return Optional.of(new Fault(new LinkedHashMap<>(Map.of("/stats", json(body))), cause));
  }

  private static Optional<Fault> blocks(String literal, String cause) {
    return withStats(stats(literal, "1048576"), cause);
  }

  @Override
  public Optional<Fault> content(ContentFault fault) {
    String field = "GET /stats JSON pointer /engine/kv/capacity_blocks";
    switch (fault) {
      case WRONG_JSON_TYPE:
        return blocks("\"127500\"", field + " is not a number (string)");
      case MISSING_POOL:
        return blocks(JsonLiterals.OMIT, field + " matches nothing");
      case NULL_POOL:
        return blocks("null", field + " is null");
      case ZERO_POOL:
        return blocks("0", field + " is 0, expected a positive token count");
      case NEGATIVE_POOL:
        return blocks("-127500", field + " is -127500, expected a positive token count");
      case FRACTIONAL_POOL:
        return blocks("127500.5", field + " is not a whole number");
      case POOL_PAST_2_63:
        return blocks("9223372036854775808", field + " is larger than 2^63");
      case NAN:
        return blocks("NaN", "malformed JSON");
      case POSITIVE_INFINITY:
        return blocks("Infinity", "malformed JSON");
      case NEGATIVE_INFINITY:
        return blocks("-Infinity", "malformed JSON");
      case DUPLICATE_SERIES_DISAGREE:
        return blocks("127500,\"capacity_blocks\":37500", "a key appears twice");
      case TRUNCATED_CONTENT:
        {
          String whole = stats("127500", "1048576");
          return withStats(
              whole.substring(0, whole.indexOf("capacity_blocks") + 20), "malformed JSON");
        }
      case NO_MODELS:
        return withStats(
            stats("127500", JsonLiterals.OMIT),
            "GET /stats JSON pointer /engine/limits/max_prompt matches nothing");
      default:
        return Optional.empty();
    }
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * llama.cpp server, from {@code GET /props}: {@code default_generation_settings.n_ctx} is the context of one
 * slot, which is both the KV a single request can use and the longest request the server admits, so it is
 * the pool and the engine context. The whole cache is n_ctx × {@code total_slots} unless it is unified;
 * that product is reported, not judged. {@code build_info} ("b4567-abc") is the version: a build id, never a
 * release version.
 */
public final class LlamaCppProbe implements EngineProbe {
  static final String PROPS = "/props";

  private final EngineHttp http;

  public LlamaCppProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.LLAMACPP;
  }

  @Override
  public ProbeOutcome probe(EngineEndpoint endpoint) {
    try {
      JsonNode props = StrictJson.requireObject(StrictJson.parse(http.getOk(endpoint, PROPS)), PROPS);
      JsonNode settings = props.get("default_generation_settings");
      if (settings == null || !settings.isObject()) {
        throw new ProbeException(PROPS + " has no default_generation_settings object");
      }
      OptionalLong slotContext = StrictJson.optionalTokens(settings, "n_ctx", PROPS + " default_generation_settings");
      if (slotContext.isEmpty()) {
        throw new ProbeException(PROPS + " reports no default_generation_settings.n_ctx");
      }
      long perSlot = slotContext.getAsLong();
      List<String> notes = new ArrayList<>();
      notes.add("pool = n_ctx of one slot (" + perSlot + " tokens): the KV one request can use");
      OptionalLong slots = StrictJson.optionalTokens(props, "total_slots", PROPS);
      if (slots.isPresent()) {
        String total = slots.getAsLong() > Long.MAX_VALUE / perSlot ? "more than 2^63"
            : String.valueOf(perSlot * slots.getAsLong());
        notes.add(slots.getAsLong() + " slots: the whole KV cache holds " + total + " tokens unless it is unified");
      } else {
        notes.add(PROPS + " reports no total_slots");
      }
      String version = EngineText.version(StrictJson.optionalText(props, "build_info"));
      return ProbeOutcome.observed(new PoolObservation(perSlot, slotContext, version, null, notes));
    } catch (ProbeException e) {
      return ProbeOutcome.failed(e.getMessage());
    }
  }
}

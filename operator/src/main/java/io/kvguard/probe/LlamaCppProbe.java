package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * llama.cpp server, from {@code GET /props} ({@code get_props} in {@code
 * tools/server/server-context.cpp}): {@code default_generation_settings.n_ctx} is the context of
 * one slot ({@code slots[0].n_ctx}), which is both the KV a single request can use and the longest
 * request the server admits (a prompt of n_ctx tokens or more is refused), so it is the pool and
 * the engine context. {@code total_slots} is the slot count; {@code /props} does not say whether
 * the slots share one unified cache (the default since PR #16736, October 2025, where every slot's
 * n_ctx is the whole cache) or each hold n_ctx, so no total is derived from them. {@code
 * build_info} ("b4567-abc") is the version: a build id, never a release version.
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
  public java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.of(new LlamaCppRejection());
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    JsonNode props =
        StrictJson.requireObject(
            StrictJson.parse(
                http.getOk(
                    endpoint,
                    PROPS,
                    Reading.json(
                        "/default_generation_settings/n_ctx", "/total_slots", "/build_info"))),
            PROPS);
    JsonNode settings = props.get("default_generation_settings");
    if (settings == null || !settings.isObject()) {
      throw new ProbeException(PROPS + " has no default_generation_settings object");
    }
    OptionalLong slotContext =
        StrictJson.optionalTokens(settings, "n_ctx", PROPS + " default_generation_settings");
    if (slotContext.isEmpty()) {
      throw new ProbeException(PROPS + " reports no default_generation_settings.n_ctx");
    }
    long perSlot = slotContext.getAsLong();
    List<String> notes = new ArrayList<>();
    notes.add(
        "pool = n_ctx of one slot ("
            + perSlot
            + " tokens): the longest prompt the server admits and the"
            + " most KV one request can use");
    OptionalLong slots = StrictJson.optionalTokens(props, "total_slots", PROPS);
    if (slots.isPresent()) {
      // Never n_ctx x total_slots: since PR #16736 the default is one unified cache that every
      // slot's n_ctx already spans, and /props does not say which layout runs.
      notes.add(
          "total_slots "
              + slots.getAsLong()
              + ": /props does not say whether the slots share one"
              + " unified KV cache of n_ctx tokens (llama.cpp's default since October 2025 when --parallel is not"
              + " given; concurrent requests then compete for it) or each hold their own");
    } else {
      notes.add(PROPS + " reports no total_slots");
    }
    String version = EngineText.version(StrictJson.optionalText(props, "build_info"));
    return ProbeOutcome.observed(new PoolObservation(perSlot, slotContext, version, null, notes));
  }
}

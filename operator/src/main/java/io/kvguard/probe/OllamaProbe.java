package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Ollama exposes no KV pool. {@code GET /api/ps} lists the loaded models with their {@code
 * context_length} (0.9.7 and later), the only bound it reveals; with several models loaded the
 * smallest counts. The observation is marked context-length-only, so the verdict says that no pool
 * was measured. A server with no model loaded cannot be judged. The version comes from {@code GET
 * /api/version}.
 */
public final class OllamaProbe implements EngineProbe {
  static final String PS = "/api/ps";
  static final String VERSION = "/api/version";

  private final EngineHttp http;

  public OllamaProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.OLLAMA;
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    JsonNode ps =
        StrictJson.requireObject(
            StrictJson.parse(http.getOk(endpoint, PS, Reading.json("/models/*/context_length"))),
            PS);
    JsonNode models = ps.get("models");
    if (models == null || !models.isArray()) {
      throw new ProbeException(PS + " has no models list");
    }
    if (models.isEmpty()) {
      throw new ProbeException(
          PS
              + " lists no loaded model, so there is no context length to judge"
              + " (load the model and keep it loaded, e.g. keep_alive -1)");
    }
    long smallest = Long.MAX_VALUE;
    for (int i = 0; i < models.size(); i++) {
      OptionalLong length =
          StrictJson.optionalTokens(models.get(i), "context_length", PS + " models[" + i + "]");
      if (length.isEmpty()) {
        throw new ProbeException(
            PS + " models[" + i + "] reports no context_length (Ollama reports it from 0.9.7)");
      }
      smallest = Math.min(smallest, length.getAsLong());
    }
    List<String> notes = new ArrayList<>();
    notes.add("Ollama exposes no KV pool: the loaded model's context length is used as the bound");
    if (models.size() > 1) {
      notes.add(models.size() + " models loaded: the smallest context length counts");
    }
    return ProbeOutcome.observed(
        PoolObservation.contextLengthOnly(smallest, version(endpoint), notes));
  }

  private String version(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response = http.get(endpoint, VERSION, Reading.json("/version"));
    if (response.status() != 200 || !response.isJson()) {
      return null;
    }
    JsonNode root = StrictJson.parse(response);
    return EngineText.version(StrictJson.optionalText(root, "version"));
  }
}

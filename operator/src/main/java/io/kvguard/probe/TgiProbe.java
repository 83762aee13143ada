package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Hugging Face TGI: the engine context is {@code /info} {@code max_total_tokens} (every version).
 * The pool is {@code /info} {@code max_batch_total_tokens} up to 2.2.x; 2.3.0 removed it and 2.3.1
 * and later export the {@code tgi_batch_max_total_tokens} gauge on {@code /metrics} instead.
 * Sharded TGI is tensor-parallel only, so one figure covers the whole pod.
 *
 * <p>Both are the router's {@code max_batch_total_tokens}: the pool the warm-up measured when the
 * shard reports one (flash-attention models), otherwise {@code --max-batch-total-tokens}, or
 * max(16000, max_total_tokens, max_batch_prefill_tokens) without the flag ({@code
 * backends/v3/src/lib.rs} {@code connect_backend} at v3.3.7; {@code router/src/server.rs} at
 * v2.2.0). The shard's answer ({@code BackendInfo}, the "Model does not support automatic max batch
 * total tokens" warning) is not served on {@code /info} or {@code /metrics}, so the note {@link
 * #FIGURE_CAVEAT} goes with every figure.
 */
public final class TgiProbe implements EngineProbe {
  static final String INFO = "/info";
  static final String METRICS = "/metrics";
  static final String POOL_GAUGE = "tgi_batch_max_total_tokens";

  static final String FIGURE_CAVEAT =
      PoolObservation.FIGURE_CAVEAT
          + "TGI measures this figure in its warm-up only for flash-attention models; for"
          + " other models the router sets it from --max-batch-total-tokens, or max(16000,"
          + " max_total_tokens, max_batch_prefill_tokens) without the flag, and nothing TGI serves"
          + " says which: for a model without flash attention the figure is only as good as that flag";

  private final EngineHttp http;

  public TgiProbe(EngineHttp http) {
    this.http = http;
  }

  @Override
  public Engine engine() {
    return Engine.TGI;
  }

  @Override
  public java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.of(new TgiRejection());
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response =
        http.getOk(
            endpoint,
            INFO,
            Reading.json(
                "/max_total_tokens", "/max_input_tokens", "/max_batch_total_tokens", "/version"));
    JsonNode info = StrictJson.requireObject(StrictJson.parse(response), INFO);
    OptionalLong engineContext = StrictJson.optionalTokens(info, "max_total_tokens", INFO);
    if (engineContext.isEmpty()) {
      throw new ProbeException(INFO + " reports no max_total_tokens");
    }
    List<String> notes = new ArrayList<>();
    OptionalLong legacyPool = StrictJson.optionalTokens(info, "max_batch_total_tokens", INFO);
    long pool;
    if (legacyPool.isPresent()) {
      pool = legacyPool.getAsLong();
      notes.add("pool from " + INFO + " max_batch_total_tokens (TGI 2.2 and older)");
    } else {
      pool = gauge(endpoint);
      notes.add("pool from " + METRICS + " " + POOL_GAUGE + " (TGI 2.3.1 and later)");
    }
    notes.add(FIGURE_CAVEAT);
    String version = EngineText.version(StrictJson.optionalText(info, "version"));
    PoolObservation seen = new PoolObservation(pool, engineContext, version, null, notes);
    // The input limit TGI checks before the total (T3, router/src/validation.rs:181-187 at v3.3.7);
    // /info has carried it as max_input_tokens since 2.0 (max_input_length before).
    OptionalLong inputLimit = StrictJson.optionalTokens(info, "max_input_tokens", INFO);
    return ProbeOutcome.observed(
        inputLimit.isPresent() ? seen.withEngineInputTokens(inputLimit.getAsLong()) : seen);
  }

  private long gauge(EngineEndpoint endpoint) throws ProbeException {
    EngineResponse response = http.get(endpoint.metrics(), METRICS, Reading.metrics(POOL_GAUGE));
    if (response.status() != 200) {
      boolean redirect = response.status() >= 300 && response.status() < 400;
      throw new ProbeException(
          INFO
              + " reports no max_batch_total_tokens (TGI 2.2 and older) and GET "
              + METRICS
              + " answered HTTP "
              + response.status()
              + (redirect ? " (redirects are not followed)" : "")
              + ", so "
              + POOL_GAUGE
              + " (TGI 2.3.1 and later) cannot be read");
    }
    if (response.isEmpty()) {
      throw new ProbeException("GET " + METRICS + " answered an empty body");
    }
    List<PrometheusText.Sample> samples =
        PrometheusText.named(PrometheusText.parse(response), POOL_GAUGE);
    if (samples.isEmpty()) {
      throw new ProbeException(
          "TGI reports its pool neither as "
              + INFO
              + " max_batch_total_tokens (2.2 and older)"
              + " nor as "
              + METRICS
              + " "
              + POOL_GAUGE
              + " (2.3.1 and later)");
    }
    if (samples.size() > 1) {
      throw new ProbeException(
          METRICS + " has " + samples.size() + " " + POOL_GAUGE + " series, expected one");
    }
    return PrometheusText.tokens(samples.get(0).value(), METRICS + " " + POOL_GAUGE);
  }
}

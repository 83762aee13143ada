package io.kvguard.probe;

import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;

/**
 * Sends one prompt just above an engine's admission limit and reports what the engine did. Only the engine's
 * own admission refusal, as its {@link EngineRejection} recognises it, counts as a refusal; any other 4xx is
 * inconclusive. The body of an answer is hashed and dropped at once: it may carry another tenant's data, so it
 * is never logged or kept.
 */
public final class RejectionProbe {
  private final EngineHttp http;

  public RejectionProbe(EngineHttp http) {
    this.http = http;
  }

  /**
   * @param engine the engine's rejection knowledge, or empty when kvguard has none for it (fails closed)
   * @param observation what the pool probe of the same process saw
   */
  public RejectionOutcome send(Optional<EngineRejection> engine, String engineName, EngineEndpoint endpoint,
      long promptTokens, String model, PoolObservation observation, EngineRejection.Route route) {
    if (engine.isEmpty()) {
      return new RejectionOutcome.Failed("kvguard has no rejection probe for engine " + engineName);
    }
    EngineRejection.Plan plan;
    try {
      plan = engine.get().plan(promptTokens, model, observation, route);
    } catch (ArithmeticException | OutOfMemoryError e) {
      return new RejectionOutcome.Failed("a " + promptTokens + "-token prompt is too large to build");
    }
    if (plan instanceof EngineRejection.Plan.Skip skip) {
      return new RejectionOutcome.Inconclusive("not sent: " + skip.reason(), promptTokens);
    }
    OverLimitPrompt prompt = ((EngineRejection.Plan.Send) plan).prompt();
    EngineResponse response;
    try {
      response = http.postJson(endpoint, prompt.path(), prompt.body());
    } catch (ProbeException e) {
      return new RejectionOutcome.Failed(e.getMessage());
    }
    int status = response.status();
    boolean streamed = response.contentType() != null
        && response.contentType().toLowerCase(Locale.ROOT).startsWith("text/event-stream");
    if (status >= 400 && status < 500 && !streamed) {
      Optional<String> refusal = engine.get().refusal(response);
      if (refusal.isPresent()) {
        return new RejectionOutcome.Refused(status, refusal.get(), promptTokens);
      }
      return new RejectionOutcome.Inconclusive(notARefusal(engine.get(), response, prompt), promptTokens);
    }
    if (status >= 300 && status < 400) {
      return new RejectionOutcome.Failed("POST " + prompt.path() + " answered HTTP " + status
          + " (redirects are not followed)");
    }
    return new RejectionOutcome.Answered(status, response.body().length, sha256(response.body()), promptTokens,
        streamed, engine.get().answerMeaning());
  }

  private static String notARefusal(EngineRejection engine, EngineResponse response, OverLimitPrompt prompt) {
    return "POST " + prompt.path() + " answered HTTP " + response.status() + " ("
        + EngineText.safe(response.contentType()) + "), which is not " + engine.refusalShape() + "; "
        + engine.fixFor(response, prompt).orElse("something other than the engine answered (a proxy, an"
            + " authentication layer) or an engine build kvguard does not know: point the role's port at the"
            + " engine itself and check which component answered in the engine's and the proxy's logs");
  }

  private static String sha256(byte[] body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}

package io.kvguard.probe;

import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import java.util.Locale;
import java.util.Optional;

/**
 * Sends one prompt just above an engine's admission limit and reports what the engine did. Only the
 * engine's own admission refusal, as its {@link EngineRejection} recognises it, counts as a
 * refusal; any other 4xx is inconclusive. The body of an answer is hashed as it arrives and only
 * its head is looked at: it may carry another tenant's data, so it is never logged or kept. The
 * prompt is produced while it is sent and never built in memory, and it is capped.
 */
public final class RejectionProbe {
  /**
   * Largest prompt sent (KVGUARD_REJECTION_MAX_PROMPT_TOKENS): four times the incident's
   * 1,048,576-token window. The prompt is streamed, so the bound is not the operator's memory but
   * what kvguard sends an engine on the strength of figures the engine itself reports (about 4
   * bytes a token: 16 MiB at the default).
   */
  public static final long DEFAULT_MAX_PROMPT_TOKENS = 4L * 1024 * 1024;

  private final EngineHttp http;
  private final long maxPromptTokens;

  public RejectionProbe(EngineHttp http) {
    this(http, DEFAULT_MAX_PROMPT_TOKENS);
  }

  public RejectionProbe(EngineHttp http, long maxPromptTokens) {
    this.http = http;
    this.maxPromptTokens = maxPromptTokens;
  }

  public long maxPromptTokens() {
    return maxPromptTokens;
  }

  /**
   * @param engine the engine's rejection knowledge, or empty when kvguard has none for it (fails
   *     closed)
   * @param observation what the pool probe of the same process saw
   */
  public RejectionOutcome send(
      Optional<EngineRejection> engine,
      String engineName,
      EngineEndpoint endpoint,
      long promptTokens,
      String model,
      PoolObservation observation,
      EngineRejection.Route route) {
    try {
      return sendOnce(engine, engineName, endpoint, promptTokens, model, observation, route);
    } catch (RuntimeException e) {
      // As a pool probe that threw (EngineProbe.probe): failed, in the operator and in check alike.
      return new RejectionOutcome.Failed(EngineProbe.unexpected(e));
    }
  }

  private RejectionOutcome sendOnce(
      Optional<EngineRejection> engine,
      String engineName,
      EngineEndpoint endpoint,
      long promptTokens,
      String model,
      PoolObservation observation,
      EngineRejection.Route route) {
    if (engine.isEmpty()) {
      return new RejectionOutcome.Failed("kvguard has no rejection probe for engine " + engineName);
    }
    if (promptTokens > maxPromptTokens) {
      // Never sent: the engine's own figures call for a prompt larger than kvguard sends; nothing
      // is proven.
      return new RejectionOutcome.Inconclusive(
          "the engine's figures call for a "
              + promptTokens
              + "-token prompt,"
              + " above KVGUARD_REJECTION_MAX_PROMPT_TOKENS ("
              + maxPromptTokens
              + "), so it was not sent and the"
              + " rejection path is unproven; if the engine really holds that many tokens, raise the limit",
          promptTokens);
    }
    EngineRejection.Plan plan = engine.get().plan(promptTokens, model, observation, route);
    if (plan instanceof EngineRejection.Plan.Skip skip) {
      return new RejectionOutcome.Inconclusive("not sent: " + skip.reason(), promptTokens);
    }
    OverLimitPrompt prompt = ((EngineRejection.Plan.Send) plan).prompt();
    EngineResponse response;
    try {
      response = http.postJson(endpoint, prompt.path(), prompt.publisher());
    } catch (ArithmeticException e) {
      return new RejectionOutcome.Failed(
          "a " + promptTokens + "-token prompt is too large to send");
    } catch (ProbeException e) {
      return new RejectionOutcome.Failed(e.getMessage());
    }
    int status = response.status();
    boolean streamed =
        response.contentType() != null
            && response.contentType().toLowerCase(Locale.ROOT).startsWith("text/event-stream");
    if (status >= 400 && status < 500 && !streamed) {
      Optional<String> refusal = engine.get().refusal(response, prompt, observation);
      if (refusal.isPresent()) {
        return new RejectionOutcome.Refused(status, refusal.get(), promptTokens);
      }
      return new RejectionOutcome.Inconclusive(
          notARefusal(engine.get(), response, prompt, observation), promptTokens);
    }
    if (status >= 300 && status < 400) {
      return new RejectionOutcome.Failed(
          "POST " + prompt.path() + " answered HTTP " + status + " (redirects are not followed)");
    }
    return new RejectionOutcome.Answered(
        status,
        response.length(),
        response.sha256(),
        promptTokens,
        streamed,
        engine.get().answerMeaning());
  }

  private static String notARefusal(
      EngineRejection engine,
      EngineResponse response,
      OverLimitPrompt prompt,
      PoolObservation observation) {
    return "POST "
        + prompt.path()
        + " answered HTTP "
        + response.status()
        + " ("
        + EngineText.safe(response.contentType())
        + "), which is not "
        + engine.refusalShape()
        + "; "
        + engine
            .fixFor(response, prompt, observation)
            .orElse(
                "something other than the engine answered (a proxy, an"
                    + " authentication layer) or an engine build kvguard does not know: point the role's port at the"
                    + " engine itself and check which component answered in the engine's and the proxy's logs");
  }
}

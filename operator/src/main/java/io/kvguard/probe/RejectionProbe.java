package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import io.kvguard.verdict.RejectionOutcome;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Sends one prompt just above an engine's admission limit and reports what the engine did. The body of an
 * answer is hashed and dropped at once: it may carry another tenant's data, so it is never logged or kept.
 */
public final class RejectionProbe {
  /**
   * A refusal must say why: length, context, tokens (TGI: "inputs tokens + max_new_tokens must be <= N"), or
   * llama.cpp's documented error type.
   */
  private static final Pattern NAMES_LENGTH = Pattern.compile(
      "length|context|too long|too many tokens|exceed|max_model_len|maximum|exceed_context_size_error"
          + "|tokens[^\"]{0,40}must be <= ?[0-9]+|less than [0-9]+ tokens");

  private final EngineHttp http;

  public RejectionProbe(EngineHttp http) {
    this.http = http;
  }

  public static boolean supports(Engine engine) {
    return OverLimitPrompt.forEngine(engine, 1, "m").isPresent();
  }

  public RejectionOutcome send(Engine engine, EngineEndpoint endpoint, long promptTokens, String model) {
    Optional<OverLimitPrompt> prompt;
    try {
      prompt = OverLimitPrompt.forEngine(engine, promptTokens, model);
    } catch (ArithmeticException | OutOfMemoryError e) {
      return new RejectionOutcome.Failed("a " + promptTokens + "-token prompt is too large to build");
    }
    if (prompt.isEmpty()) {
      return new RejectionOutcome.Failed("kvguard has no rejection probe for engine " + engine.wireName());
    }
    EngineResponse response;
    try {
      response = http.postJson(endpoint, prompt.get().path(), prompt.get().body());
    } catch (ProbeException e) {
      return new RejectionOutcome.Failed(e.getMessage());
    }
    int status = response.status();
    boolean streamed = response.contentType() != null
        && response.contentType().toLowerCase(Locale.ROOT).startsWith("text/event-stream");
    if (status >= 400 && status < 500 && !streamed) {
      String body = response.text().toLowerCase(Locale.ROOT);
      return new RejectionOutcome.Refused(status, NAMES_LENGTH.matcher(body).find(), promptTokens);
    }
    if (status >= 300 && status < 400) {
      return new RejectionOutcome.Failed("POST " + prompt.get().path() + " answered HTTP " + status
          + " (redirects are not followed)");
    }
    return new RejectionOutcome.Answered(status, response.body().length, sha256(response.body()), promptTokens, streamed);
  }

  private static String sha256(byte[] body) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}

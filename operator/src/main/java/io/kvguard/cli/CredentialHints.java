package io.kvguard.cli;

import io.kvguard.probe.WireCapture;
import io.kvguard.verdict.PoolVerdict;
import java.util.OptionalInt;

/**
 * When an engine answered 401 or 403 and the check did not pass, the reason says what to do about
 * the credentials: an engine started with {@code --api-key} answers every probe so, and "GET /props
 * answered HTTP 401" alone does not say that check can send a key.
 */
final class CredentialHints {
  private CredentialHints() {}

  static PoolVerdict explain(
      PoolVerdict verdict, WireCapture capture, CheckCommand.Request request) {
    OptionalInt status = capture.credentialsRefused();
    if (verdict.verified() || status.isEmpty()) {
      return verdict;
    }
    String fromSecret =
        request
            .keyFrom()
            .map(command -> " (the ModelDeployment's probe.authSecretRef: " + command + ")")
            .orElse("");
    String hint =
        request.apiKey().isEmpty()
            ? "the engine answered HTTP "
                + status.getAsInt()
                + ": it requires an API key and none was sent; write the key to a file and pass"
                + " --api-key-file FILE"
                + fromSecret
            : "the engine answered HTTP "
                + status.getAsInt()
                + " to the API key from --api-key-file "
                + request.apiKey().get().file()
                + ": it is not a key the engine (or a proxy in front of it) accepts; pass the key the"
                + " engine was started with"
                + fromSecret;
    return new PoolVerdict(verdict.verdict(), verdict.reason(), verdict.message() + "; " + hint);
  }
}

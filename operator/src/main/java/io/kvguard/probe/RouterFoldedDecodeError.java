package io.kvguard.probe;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A decode worker's error status that sgl-model-gateway's prefill/decode router does not pass on.
 * Read in sgl-project/sglang v0.5.18 (through bytedance-iaas/sglang), {@code
 * sgl-model-gateway/src/routers/http/pd_router.rs}: any non-2xx answer of the decode worker goes to
 * {@code handle_decode_error_response} ({@code :784-823}), which keeps the status only for 400,
 * 404, 500, 502 and 503 and answers every other one (401, 403, 413, 429, 504, …) as 500 with the
 * code {@code decode_error} ({@code :597-615}), written by {@code routers/error.rs:55-81} as {@code
 * {"error": {"type": "Internal Server Error", "code": "decode_error", "message": M}}}. M is the
 * worker's {@code error.message}, else its {@code message}, else its whole body ({@code :574-595}).
 *
 * <p>Such an answer is a refusal by the decode worker (or by something in front of it), never its
 * 200 and never its own 500 (that one is {@code decode_internal_error}): no engine answered the
 * prompt, so it proves nothing either way and is inconclusive, not unsafe. SGLang's own 401 and 403
 * are {@code {"error": "Unauthorized"}} and {@code {"error": "Forbidden"}} (v0.5.18 {@code
 * python/sglang/srt/utils/auth.py:187-197}), whose {@code error} is no object, so M is that whole
 * body. SGLang v0.5.18 has no 413 of its own for {@code /generate} (its HTTP server names 413 only
 * when mapping errors of {@code /v1/messages}, {@code entrypoints/http_server.py:540-552}): a 413
 * comes from a proxy or sidecar in front of the decode worker, whose body kvguard cannot know, so
 * it is named from the body's words where they say so.
 */
final class RouterFoldedDecodeError {
  private RouterFoldedDecodeError() {}

  /** Why the answer proves nothing and what to change, when it is the router's decode_error. */
  static Optional<String> reason(EngineResponse response, String path, long requestBytes) {
    if (response.status() != 500) {
      return Optional.empty();
    }
    Optional<RouterErrorBody> error =
        RouterErrorBody.read(response)
            .filter(e -> e.type().equals("Internal Server Error"))
            .filter(e -> e.code().equals("decode_error"));
    if (error.isEmpty()) {
      return Optional.empty();
    }
    String message = error.get().message();
    String head =
        "POST "
            + path
            + " answered HTTP 500 decode_error: the decode worker refused the request with a status"
            + " sgl-model-gateway does not pass on (any but 400, 404, 500, 502 and 503), so no"
            + " engine answered the prompt and nothing is proven; ";
    return Optional.of(head + cause(message, requestBytes));
  }

  private static String cause(String message, long requestBytes) {
    Optional<String> sglangAuth = sglangAuthRefusal(message);
    String lower = message.toLowerCase(Locale.ROOT);
    if (sglangAuth.isPresent()
        || lower.contains("unauthorized")
        || lower.contains("forbidden")
        || lower.contains("api key")
        || lower.contains("authentication")) {
      return "it was an authentication refusal ("
          + sglangAuth.map(s -> "SGLang's own " + s + ", HTTP 401/403").orElse("HTTP 401 or 403")
          + "): the decode worker wants a key the router did not send it. With"
          + " spec.rejectionProbe.router.registerWorkers kvguard hands the proof router the"
          + " engines'"
          + " token (spec.probe.authSecretRef) as each worker's api_key, only when the pods are"
          + " probed over plain HTTP; a router that lists its own workers must be given the"
          + " workers' key";
    }
    if (lower.contains("413") || lower.contains("too large") || lower.contains("payload")) {
      return "it was a request-size refusal (HTTP 413, from a proxy or sidecar in front of the"
          + " decode worker: SGLang has none of its own for /generate): the probe's request is"
          + " about "
          + requestBytes
          + " bytes, so raise that component's body limit above it, or route the decode pods"
          + " without it";
    }
    return "the router does not say which status it was; find it in the router's log (\"Decode"
        + " server returned error status\") and the decode worker's";
  }

  /** SGLang's 401/403 body, passed on whole as the message: "Unauthorized" or "Forbidden". */
  private static Optional<String> sglangAuthRefusal(String message) {
    EngineResponse inner =
        new EngineResponse("", 401, "application/json", message.getBytes(StandardCharsets.UTF_8));
    return ErrorBodies.strictObject(inner)
        .filter(body -> ErrorBodies.hasExactly(body, Set.of("error")))
        .flatMap(body -> ErrorBodies.text(body, "error"))
        .filter(text -> text.equals("Unauthorized") || text.equals("Forbidden"))
        .map(text -> "\"" + text + "\"");
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A worker's error as sgl-model-gateway's prefill/decode router passes it on: not as the worker
 * wrote it, but inside the router's own error {@code {"error": {"type", "code", "message"}}}
 * ({@code routers/error.rs:55-81}). Read in sgl-project/sglang v0.5.18 (through
 * bytedance-iaas/sglang), {@code sgl-model-gateway/src/routers/http/pd_router.rs}:
 *
 * <ul>
 *   <li>The prefill worker's non-2xx answer (the router waits for prefill first and drops the
 *       decode request when it fails, {@code :711-759}) becomes the message {@code "Prefill server
 *       error (STATUS REASON): " + the worker's body}, answered with the worker's status for 400,
 *       404, 500, 502 and 503 (code {@code prefill_bad_request} and so on) and 500 {@code
 *       prefill_error} for any other ({@code :1294-1333}). The worker's body is there whole, so it
 *       is given back to the engine's own reading with the worker's status.
 *   <li>The decode worker's 400 becomes 400 {@code decode_bad_request} whose message is the
 *       worker's {@code error.message} (else its {@code message}, else its whole body) ({@code
 *       :574-610}): only the message is left, so it is given back as SGLang's Python server writes
 *       a refusal, {@code {"error": {"message": …}}}, which the engine's reading still matches
 *       sentence by sentence. Any other decode status is folded into 500 {@code decode_error},
 *       which does not say which status it was: {@link RouterFoldedDecodeError}.
 * </ul>
 *
 * Without this, every refusal through a real router read as something else than SGLang's refusal,
 * and no proof could pass.
 */
final class RouterWorkerError {
  /** The prefill message, and the http crate's "STATUS REASON" ({@code StatusCode} Display). */
  private static final Pattern PREFILL =
      Pattern.compile("Prefill server error \\(([1-5][0-9]{2}) ([^)]*)\\): (.*)", Pattern.DOTALL);

  /** The statuses the router keeps, with its code suffix and the reason phrase it writes. */
  private static final Map<Integer, String[]> KEPT =
      Map.of(
          400, new String[] {"bad_request", "Bad Request"},
          404, new String[] {"not_found", "Not Found"},
          500, new String[] {"internal_error", "Internal Server Error"},
          502, new String[] {"bad_gateway", "Bad Gateway"},
          503, new String[] {"unavailable", "Service Unavailable"});

  private RouterWorkerError() {}

  /** The worker's own answer inside the router's error, when the answer is one; else empty. */
  static Optional<EngineResponse> workerAnswer(EngineResponse response) {
    Optional<RouterErrorBody> error = RouterErrorBody.read(response);
    if (error.isEmpty() || !KEPT.containsKey(response.status())) {
      return Optional.empty();
    }
    String[] kept = KEPT.get(response.status());
    String type = error.get().type();
    String code = error.get().code();
    String message = error.get().message();
    if (!type.equals(kept[1])) {
      return Optional.empty();
    }
    if (code.equals("prefill_" + kept[0])) {
      Matcher m = PREFILL.matcher(message);
      if (m.matches() && Integer.parseInt(m.group(1)) == response.status()) {
        return Optional.of(answer(response, response.status(), m.group(3)));
      }
    }
    if (code.equals("prefill_error") && response.status() == 500) {
      // Any other worker status is answered as 500 prefill_error; the message still names it.
      Matcher m = PREFILL.matcher(message);
      if (m.matches() && !KEPT.containsKey(status(m))) {
        return Optional.of(answer(response, status(m), m.group(3)));
      }
    }
    if (response.status() == 400 && code.equals("decode_bad_request")) {
      ObjectNode body = JsonNodeFactory.instance.objectNode();
      body.putObject("error").put("message", message);
      return Optional.of(answer(response, 400, body.toString()));
    }
    return Optional.empty();
  }

  private static int status(Matcher m) {
    return Integer.parseInt(m.group(1));
  }

  private static EngineResponse answer(EngineResponse router, int status, String body) {
    return new EngineResponse(
        router.path(), status, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }
}

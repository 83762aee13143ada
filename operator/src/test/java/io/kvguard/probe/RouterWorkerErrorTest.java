package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A worker's error inside sgl-model-gateway v0.5.18's own (routers/http/pd_router.rs:1294-1333 for
 * the prefill worker, :574-610 for the decode worker; routers/error.rs:55-81) is read back as the
 * worker's answer, and nothing else is.
 */
class RouterWorkerErrorTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** SGLang v0.5.18's S1 refusal, as the engine fixture has it. */
  private static final String SGLANG_S1 =
      "{\"error\":{\"message\":\"The input (1048576 tokens) is longer than the model's context"
          + " length (1048576 tokens).\"}}";

  private static EngineResponse answer(int status, String body) {
    return new EngineResponse(
        "/generate", status, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  /** The router's error, serialised as serde_json writes ErrorResponse. */
  private static EngineResponse routerError(int status, String type, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", type).put("code", code).put("message", message);
    return answer(status, body.toString());
  }

  @Test
  void thePrefillWorkersRefusalIsItsOwnBodyAndStatus() {
    EngineResponse worker =
        RouterWorkerError.workerAnswer(
                routerError(
                    400,
                    "Bad Request",
                    "prefill_bad_request",
                    "Prefill server error (400 Bad Request): " + SGLANG_S1))
            .orElseThrow();

    assertThat(worker.status()).isEqualTo(400);
    assertThat(worker.text()).isEqualTo(SGLANG_S1);
    assertThat(worker.isJson()).isTrue();
  }

  @Test
  void aPrefillStatusTheRouterFoldsInto500IsTheWorkersAgain() {
    EngineResponse worker =
        RouterWorkerError.workerAnswer(
                routerError(
                    500,
                    "Internal Server Error",
                    "prefill_error",
                    "Prefill server error (401 Unauthorized): {\"error\":\"no\"}"))
            .orElseThrow();

    assertThat(worker.status()).isEqualTo(401);
  }

  @Test
  void theDecodeWorkersRefusalKeepsOnlyItsMessage() {
    EngineResponse worker =
        RouterWorkerError.workerAnswer(
                routerError(
                    400,
                    "Bad Request",
                    "decode_bad_request",
                    "The input (1048576 tokens) is longer than the model's context length (1048576"
                        + " tokens)."))
            .orElseThrow();

    assertThat(worker.status()).isEqualTo(400);
    assertThat(worker.text()).isEqualTo(SGLANG_S1);
  }

  @Test
  void anythingElseIsNotAWorkersAnswer() {
    // The engine's own body, unwrapped (a pod, or a router that passes bodies on).
    assertThat(RouterWorkerError.workerAnswer(answer(400, SGLANG_S1))).isEmpty();
    // The router's own 503.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(
                    503,
                    "Service Unavailable",
                    "server_selection_failed",
                    "No available servers: No prefill workers available.")))
        .isEmpty();
    // A status in the message that is not the one answered.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(
                    400,
                    "Bad Request",
                    "prefill_bad_request",
                    "Prefill server error (500 Internal Server Error): " + SGLANG_S1)))
        .isEmpty();
    // A code that is not the status's.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(
                    400,
                    "Bad Request",
                    "prefill_internal_error",
                    "Prefill server error (400 Bad Request): " + SGLANG_S1)))
        .isEmpty();
    // A type that is not the status's reason.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(
                    400,
                    "Bad",
                    "prefill_bad_request",
                    "Prefill server error (400 Bad Request): x")))
        .isEmpty();
    // A field the router does not write.
    assertThat(
            RouterWorkerError.workerAnswer(
                answer(
                    400,
                    "{\"error\":{\"type\":\"Bad Request\",\"code\":\"prefill_bad_request\","
                        + "\"message\":\"Prefill server error (400 Bad Request): x\",\"param\":1}}")))
        .isEmpty();
    // A decode status the router folds into 500 does not say which it was.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(500, "Internal Server Error", "decode_error", "nope")))
        .isEmpty();
    // A 500 prefill_error naming a status the router would have kept.
    assertThat(
            RouterWorkerError.workerAnswer(
                routerError(
                    500,
                    "Internal Server Error",
                    "prefill_error",
                    "Prefill server error (400 Bad Request): " + SGLANG_S1)))
        .isEmpty();
  }
}

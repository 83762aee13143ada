package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * sgl-model-gateway v0.5.18 answers a decode worker's status other than 400, 404, 500, 502 and 503
 * as its own 500 decode_error (routers/http/pd_router.rs:597-615, routers/error.rs:55-81): that
 * answer, and only that one, is read as the decode worker's refusal.
 */
class RouterFoldedDecodeErrorTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static EngineResponse answer(int status, String body) {
    return new EngineResponse(
        "/generate", status, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  private static EngineResponse routerError(int status, String type, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", type).put("code", code).put("message", message);
    return answer(status, body.toString());
  }

  private static EngineResponse decodeError(String message) {
    return routerError(500, "Internal Server Error", "decode_error", message);
  }

  @Test
  void sglangsOwn401And403AreNamedAsAuthentication() {
    assertThat(
            RouterFoldedDecodeError.reason(
                decodeError("{\"error\":\"Unauthorized\"}"), "/generate", 4_000_000))
        .get()
        .asString()
        .contains("SGLang's own \"Unauthorized\", HTTP 401/403");
    assertThat(
            RouterFoldedDecodeError.reason(
                decodeError("{\"error\":\"Forbidden\"}"), "/generate", 4_000_000))
        .get()
        .asString()
        .contains("SGLang's own \"Forbidden\"");
  }

  @Test
  void aProxysPayloadTooLargeIsNamedAsRequestSize() {
    assertThat(
            RouterFoldedDecodeError.reason(
                decodeError("<html><title>413 Request Entity Too Large</title></html>"),
                "/generate",
                4_194_400))
        .get()
        .asString()
        .contains("request-size refusal (HTTP 413")
        .contains("about 4194400 bytes");
  }

  @Test
  void anyOtherFoldedStatusIsStillTheDecodeWorkersRefusal() {
    assertThat(RouterFoldedDecodeError.reason(decodeError("slow down"), "/generate", 1))
        .get()
        .asString()
        .contains("does not say which status it was");
  }

  /** The decode engine's own 500, another code, another status or shape: not this answer. */
  @Test
  void nothingButTheRoutersDecodeErrorIsRead() {
    String auth = "{\"error\":\"Unauthorized\"}";
    assertThat(
            RouterFoldedDecodeError.reason(
                routerError(500, "Internal Server Error", "decode_internal_error", auth),
                "/generate",
                1))
        .isEmpty();
    assertThat(
            RouterFoldedDecodeError.reason(
                routerError(502, "Bad Gateway", "decode_error", auth), "/generate", 1))
        .isEmpty();
    assertThat(
            RouterFoldedDecodeError.reason(
                routerError(500, "Bad Request", "decode_error", auth), "/generate", 1))
        .isEmpty();
    assertThat(
            RouterFoldedDecodeError.reason(
                answer(
                    500,
                    "{\"error\":{\"type\":\"Internal Server Error\",\"code\":\"decode_error\","
                        + "\"message\":\"x\",\"extra\":1}}"),
                "/generate",
                1))
        .isEmpty();
    assertThat(RouterFoldedDecodeError.reason(answer(500, auth), "/generate", 1)).isEmpty();
  }
}

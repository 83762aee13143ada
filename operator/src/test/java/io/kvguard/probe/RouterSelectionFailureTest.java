package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The router's own "no worker" 503 (sgl-model-gateway v0.5.18 routers/http/pd_router.rs:191-197,
 * routers/error.rs:55-81) is told apart from a worker's 503 the router passes on (on /generate
 * prefill_unavailable or decode_unavailable, pd_router.rs:1320-1323, 609-610; on a proxied GET
 * server_unavailable, :156-159), which stays the engine's answer.
 */
class RouterSelectionFailureTest {
  private static EngineResponse answer(int status, String body) {
    return new EngineResponse(
        "/generate", status, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theRoutersOwnNoAvailableServersIsRecognised() {
    assertThat(
            RouterSelectionFailure.code(
                answer(
                    503,
                    "{\"error\":{\"type\":\"Service Unavailable\",\"code\":\"server_selection_failed\","
                        + "\"message\":\"No available servers: No prefill workers available. Please check"
                        + " if prefill servers are configured and healthy.\"}}")))
        .hasValue("server_selection_failed");
  }

  @Test
  void aWorkers503PassedOnOrAnotherShapeIsNot() {
    assertThat(
            RouterSelectionFailure.code(
                answer(
                    503,
                    "{\"error\":{\"type\":\"Service Unavailable\",\"code\":\"server_unavailable\","
                        + "\"message\":\"Server returned status: 503 Service Unavailable\"}}")))
        .isEmpty();
    assertThat(
            RouterSelectionFailure.code(
                answer(
                    503,
                    "{\"error\":{\"type\":\"Service Unavailable\",\"code\":\"prefill_unavailable\","
                        + "\"message\":\"Prefill server error (503 Service Unavailable): busy\"}}")))
        .isEmpty();
    assertThat(
            RouterSelectionFailure.code(
                answer(
                    502,
                    "{\"error\":{\"type\":\"Service Unavailable\",\"code\":\"server_selection_failed\","
                        + "\"message\":\"No available servers: x\"}}")))
        .isEmpty();
    assertThat(
            RouterSelectionFailure.code(
                answer(
                    503,
                    "{\"error\":{\"type\":\"Service Unavailable\",\"code\":\"server_selection_failed\","
                        + "\"message\":\"No available servers: x\",\"extra\":1}}")))
        .isEmpty();
  }
}

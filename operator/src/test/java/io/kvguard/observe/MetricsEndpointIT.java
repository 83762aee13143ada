package io.kvguard.observe;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.HealthServer;
import io.kvguard.MetricsServer;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testkit.EngineShapes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What Prometheus scrapes from the operator, through the same HTTP server production runs. */
class MetricsEndpointIT extends EmbeddedClusterTest {
  private static final Map<String, String> PREFILL = Map.of("app", "glm", "role", "prefill");
  private MetricsServer metrics;
  private HealthServer health;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void startServer() throws Exception {
    metrics = new MetricsServer("127.0.0.1", 0, h.registry::scrape);
    health = new HealthServer(0, () -> true, () -> true);
    metrics.start();
    health.start();
  }

  @AfterEach
  void stopServer() {
    metrics.close();
    health.close();
  }

  private HttpResponse<String> get(String path) throws Exception {
    int port = path.equals("/metrics") ? metrics.port() : health.port();
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void scrapeShowsPoolWindowVerdictTransitionsAndProbeTimings() throws Exception {
    h.pod(
        "glm-prefill-0",
        PREFILL,
        h.engine(EngineShapes.sglang(1_048_576, "prefill", "0.5.22", 681_280, 681_280)));
    h.create(h.modelDeployment("glm", 1_048_576, role("prefill", Engine.SGLANG, PREFILL)));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("glm-prefill-0"))
                    .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolTooSmall")));

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              String body = get("/metrics").body();
              assertThat(body)
                  .containsPattern(
                      "(?m)^kvguard_pod_kv_pool_tokens\\{[^}]*pod=\"glm-prefill-0\"[^}]*role=\"prefill\"[^}]*\\} 681280(\\.0)?$")
                  .containsPattern(
                      "(?m)^kvguard_pod_verified\\{[^}]*pod=\"glm-prefill-0\"[^}]*\\} 0(\\.0)?$")
                  .containsPattern(
                      "(?m)^kvguard_context_window_tokens\\{[^}]*modeldeployment=\"glm\"[^}]*\\} 1048576(\\.0)?$")
                  .containsPattern(
                      "(?m)^kvguard_gate_transitions_total\\{[^}]*status=\"False\"[^}]*\\} 1(\\.0)?$")
                  .containsPattern(
                      "kvguard_probe_duration_seconds_count\\{[^}]*engine=\"sglang\"[^}]*\\} [1-9]")
                  .contains("kvguard_build_info")
                  .contains("operator_sdk_");
            });
    assertThat(get("/healthz").statusCode()).isEqualTo(200);
    assertThat(get("/readyz").statusCode()).isEqualTo(200);
    // The kubelet's probes and Prometheus's scrapes never share a port (or its threads).
    assertThat(health.port()).isNotEqualTo(metrics.port());
    assertThat(
            http.send(
                    HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + metrics.port() + "/healthz"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(404);
  }
}

package io.kvguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §3: whoever reaches the metrics port cannot make Prometheus lose a scrape (and fire its
 * absent() alerts) by holding connections.
 */
class MetricsServerFloodTest {
  private final List<Socket> held = new ArrayList<>();
  private final HttpClient prometheus =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  @AfterEach
  void closeHeld() throws Exception {
    for (Socket socket : held) {
      socket.close();
    }
  }

  private Socket connect(MetricsServer server, String bytes) throws Exception {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
    OutputStream out = socket.getOutputStream();
    out.write(bytes.getBytes(StandardCharsets.US_ASCII));
    out.flush();
    held.add(socket);
    return socket;
  }

  private HttpResponse<String> scrape(MetricsServer server, Duration timeout) throws Exception {
    return prometheus.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
            .timeout(timeout)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aScrapeIsAnsweredWhileManyClientsHoldHalfSentRequests() throws Exception {
    try (MetricsServer server =
        new MetricsServer("127.0.0.1", 0, () -> "kvguard_build_info{version=\"t\"} 1\n")) {
      server.start();
      for (int i = 0; i < 300; i++) {
        connect(server, "GET /metrics HTTP/1.1\r\nHost: kvguard\r\n");
      }
      for (int scrape = 0; scrape < 3; scrape++) {
        HttpResponse<String> answer = scrape(server, Duration.ofSeconds(2));
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Content-Type"))
            .hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(answer.body()).isEqualTo("kvguard_build_info{version=\"t\"} 1\n");
      }
    }
  }

  @Test
  void clientsThatAskAndNeverReadDoNotHoldTheScrapeOrTheHeap() throws Exception {
    String page = "x".repeat(4 * 1024 * 1024 - 1) + "\n";
    try (MetricsServer server = new MetricsServer("127.0.0.1", 0, () -> page)) {
      server.start();
      long before = liveHeapBytes();
      for (int i = 0; i < 40; i++) {
        connect(server, "GET /metrics HTTP/1.1\r\nHost: kvguard\r\n\r\n")
            .setReceiveBufferSize(4096);
      }
      HttpResponse<String> answer = scrape(server, Duration.ofSeconds(4));
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.body()).hasSize(page.length());
      // 40 answers of 4 MiB not taken would hold 160 MiB until their connections expire (5 s);
      // answers in flight are bounded at 32 MiB, so the heaviest client's oldest were closed
      // (the rest: the scrape's own 4 MiB page and the HTTP client; unbounded, it grew 344 MB).
      long grown = liveHeapBytes() - before;
      assertThat(grown)
          .isLessThan(
              io.kvguard.net.GetEndpointServer.MAX_PENDING_ANSWER_BYTES + 48L * 1024 * 1024);
    }
  }

  private static long liveHeapBytes() {
    System.gc();
    return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  @Test
  void onlyGetAndHeadOnMetricsAreServed() throws Exception {
    try (MetricsServer server = new MetricsServer("127.0.0.1", 0, () -> "m 1\n")) {
      server.start();
      assertThat(statusLine(server, "HEAD /metrics HTTP/1.1\r\nHost: k\r\n\r\n"))
          .isEqualTo("HTTP/1.1 200 OK");
      assertThat(statusLine(server, "POST /metrics HTTP/1.1\r\nHost: k\r\n\r\n"))
          .startsWith("HTTP/1.1 405");
      assertThat(statusLine(server, "GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n"))
          .startsWith("HTTP/1.1 404");
    }
  }

  private String statusLine(MetricsServer server, String request) throws Exception {
    Socket socket = connect(server, request);
    socket.setSoTimeout(5000);
    String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    return answer.substring(0, answer.indexOf("\r\n"));
  }
}

package io.kvguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import org.junit.jupiter.api.Test;

/** Review of issue 20: many half-sent requests (the JDK server failed /healthz at 20). */
class HealthServerFloodTest {
  @Test
  void healthzAnswersWhileMoreConnectionsThanThreadsHoldHalfARequest() throws Exception {
    List<Socket> halfSent = new ArrayList<>();
    try (HealthServer health = new HealthServer(0, () -> true, () -> true)) {
      health.start();
      for (int i = 0; i < 300; i++) {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), health.port());
        OutputStream out = socket.getOutputStream();
        out.write("GET /healthz HTTP/1.1\r\nHost: kvguard\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        halfSent.add(socket);
      }
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> answer =
          client.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + health.port() + "/healthz"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, answer.statusCode());
    } finally {
      for (Socket socket : halfSent) {
        socket.close();
      }
    }
  }
}

package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.customresource.ModelDeployment;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The webhook's HTTPS server as the API server meets it: TLS, keep-alive, rotated key pairs,
 * dawdling clients.
 */
class WebhookServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path GOLDEN = Path.of("src/test/resources/golden/webhook/selected-no-gates");

  @TempDir Path certDir;
  private final CertificateIssuer.Issued firstCa =
      CertificateIssuer.certificateAuthority("first-ca", Instant.now(), Duration.ofDays(1));
  private final CertificateIssuer.Issued secondCa =
      CertificateIssuer.certificateAuthority("second-ca", Instant.now(), Duration.ofDays(1));
  private WebhookServer server;
  private HttpClient client;

  @BeforeEach
  void start() throws Exception {
    write(
        CertificateIssuer.servingCertificate(
            firstCa, List.of("localhost"), Instant.now(), Duration.ofDays(1)));
    List<ModelDeployment> policies =
        List.of(
            new KubernetesSerialization()
                .unmarshal(
                    Files.readString(GOLDEN.resolve("in-modeldeployments.yaml")),
                    ModelDeployment.class));
    server =
        new WebhookServer(
            0,
            new ServingCertificate(certDir),
            new AdmissionHandler(namespace -> policies, new SimpleMeterRegistry()));
    server.start();
    client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .sslContext(trusting(firstCa, secondCa))
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void answersAnAdmissionReviewWithThePatchOverTls() throws Exception {
    HttpResponse<String> answer = post(Files.readString(GOLDEN.resolve("in-review.json")));

    assertThat(answer.statusCode()).isEqualTo(200);
    JsonNode response = JSON.readTree(answer.body()).path("response");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(
            new String(
                Base64.getDecoder().decode(response.path("patch").asText()),
                StandardCharsets.UTF_8))
        .contains("\"path\":\"/spec/readinessGates\"", "kvguard.io/pool-verified");
  }

  /**
   * The API server encodes the review with Go's encoding/json (apimachinery
   * pkg/runtime/serializer/json/json.go at v0.34.9: json.NewEncoder, HTML escaping on), which
   * writes each {@code <}, {@code >} and {@code &} of the pod as six bytes. A pod a tenant creates
   * with 1.4 MiB of {@code <} in an environment variable (one byte each in its request and in etcd,
   * so it is stored) arrives as an 8.4 MiB review; refusing it would admit the pod without the gate
   * under failurePolicy Ignore.
   */
  @Test
  void aPodWhoseEscapedReviewOutgrowsThreeMebibytesStillGetsTheGate() throws Exception {
    ObjectNode review =
        (ObjectNode) JSON.readTree(Files.readString(GOLDEN.resolve("in-review.json")));
    ObjectNode container = (ObjectNode) review.at("/request/object/spec/containers/0");
    container.withArray("env").addObject().put("name", "TEMPLATE").put("value", "PLACEHOLDER");
    int podBytes = 1400 * 1024;
    String body =
        JSON.writeValueAsString(review).replace("PLACEHOLDER", "\\u003c".repeat(podBytes));
    assertThat(body.length()).isGreaterThan(8 * 1024 * 1024);

    HttpResponse<String> answer = post(body);

    assertThat(answer.statusCode()).isEqualTo(200);
    JsonNode response = JSON.readTree(answer.body()).path("response");
    assertThat(response.path("uid").asText()).isEqualTo("a1");
    assertThat(
            new String(
                Base64.getDecoder().decode(response.path("patch").asText()),
                StandardCharsets.UTF_8))
        .contains("kvguard.io/pool-verified");
  }

  @Test
  void keptAliveConnectionAnswersOneRequestAfterAnother() throws Exception {
    for (int i = 0; i < 20; i++) {
      assertThat(post(Files.readString(GOLDEN.resolve("in-review.json"))).statusCode())
          .isEqualTo(200);
    }
  }

  @Test
  void aBrokenReviewIsAllowedUnchanged() throws Exception {
    HttpResponse<String> answer =
        post("{\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{\"uid\":\"u1\"");

    assertThat(answer.statusCode()).isEqualTo(200);
    JsonNode response = JSON.readTree(answer.body()).path("response");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
  }

  @Test
  void otherPathsAndMethodsAreRefused() throws Exception {
    HttpResponse<String> wrongPath =
        client.send(
            HttpRequest.newBuilder(url("/mutate-v1-service"))
                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> wrongMethod =
        client.send(
            HttpRequest.newBuilder(url(WebhookServer.PATH)).GET().build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(wrongPath.statusCode()).isEqualTo(404);
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
  }

  @Test
  void aReplacedKeyPairIsServedToNewConnections() throws Exception {
    BigInteger first = servedCertificate().getSerialNumber();
    CertificateIssuer.Issued rotated =
        CertificateIssuer.servingCertificate(
            secondCa, List.of("localhost"), Instant.now(), Duration.ofDays(1));

    write(rotated);

    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(servedCertificate().getSerialNumber())
                    .isEqualTo(rotated.certificate().getSerialNumber()));
    assertThat(rotated.certificate().getSerialNumber()).isNotEqualTo(first);
    assertThat(post(Files.readString(GOLDEN.resolve("in-review.json"))).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aHalfWrittenKeyPairKeepsTheOneInUse() throws Exception {
    BigInteger first = servedCertificate().getSerialNumber();
    CertificateIssuer.Issued rotated =
        CertificateIssuer.servingCertificate(
            secondCa, List.of("localhost"), Instant.now(), Duration.ofDays(1));

    // The certificate is replaced, the key not yet: they do not belong together.
    Files.writeString(certDir.resolve(ServingCertificate.CERT_FILE), rotated.certificatePem());
    // Held for longer than two reload periods (1 s each): the old pair is served throughout.
    await()
        .during(Duration.ofMillis(2500))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(servedCertificate().getSerialNumber()).isEqualTo(first));
    assertThat(post(Files.readString(GOLDEN.resolve("in-review.json"))).statusCode())
        .isEqualTo(200);
  }

  @Test
  void connectionsThatSendHalfARequestDoNotHoldTheApiServersOut() throws Exception {
    List<Socket> dawdlers = new ArrayList<>();
    try {
      for (int i = 0; i < WebhookServer.MAX_CONNECTIONS + 40; i++) {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("localhost", server.port()), 2000);
        OutputStream out = socket.getOutputStream();
        // The first bytes of a TLS record header, and nothing after.
        out.write(new byte[] {0x16, 0x03, 0x01});
        out.flush();
        dawdlers.add(socket);
      }
      long start = System.nanoTime();
      HttpResponse<String> answer = post(Files.readString(GOLDEN.resolve("in-review.json")));

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    } finally {
      for (Socket socket : dawdlers) {
        socket.close();
      }
    }
  }

  /**
   * The API server keeps one connection and sends review after review on it. A pod then opens more
   * connections than the server keeps, each sending the first bytes of a TLS record and nothing
   * more: from another address (127.0.0.2: all of 127/8 is loopback on Linux), and from the API
   * server's own (its source address can be shared: a node address behind SNAT, a konnectivity
   * agent).
   */
  @ParameterizedTest
  @ValueSource(strings = {"127.0.0.2", "127.0.0.1"})
  void aFloodOfHalfSentConnectionsDoesNotCloseTheApiServersKeptAliveConnection(String floodFrom)
      throws Exception {
    String review = Files.readString(GOLDEN.resolve("in-review.json"));
    int flooding = WebhookServer.MAX_CONNECTIONS + 40;
    List<Socket> flood = new ArrayList<>();
    try (SSLSocket apiServer =
        (SSLSocket)
            trusting(firstCa, secondCa)
                .getSocketFactory()
                .createSocket("127.0.0.1", server.port())) {
      apiServer.setSoTimeout(5000);
      assertThat(exchange(apiServer, review)).startsWith("HTTP/1.1 200");
      for (int i = 0; i < flooding; i++) {
        Socket socket = new Socket();
        socket.bind(new InetSocketAddress(floodFrom, 0));
        socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 2000);
        socket.getOutputStream().write(new byte[] {0x16, 0x03, 0x01});
        socket.getOutputStream().flush();
        flood.add(socket);
      }
      // 169 connections for 128 places: 41 are closed. Once the flood's 40th is, the server has
      // made room for all of it.
      Socket fortieth = flood.get(39);
      fortieth.setSoTimeout(100);
      await().atMost(Duration.ofSeconds(10)).until(() -> closedByServer(fortieth));

      assertThat(exchange(apiServer, review))
          .as("a second review on the API server's kept-alive connection")
          .startsWith("HTTP/1.1 200");
    } finally {
      for (Socket socket : flood) {
        socket.close();
      }
    }
  }

  private static boolean closedByServer(Socket socket) {
    try {
      return socket.getInputStream().read() < 0;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }

  /** One HTTP/1.1 POST of a review on a kept-alive connection; returns the status line. */
  private static String exchange(SSLSocket socket, String review) throws Exception {
    byte[] body = review.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    OutputStream out = socket.getOutputStream();
    out.write(
        ("POST "
                + WebhookServer.PATH
                + "?timeout=10s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Content-Length: "
                + body.length
                + "\r\n\r\n")
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
    java.io.InputStream in = socket.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new java.io.EOFException("connection closed after " + head);
      }
      head.append((char) b);
    }
    java.util.regex.Matcher length =
        java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
    if (length.find()) {
      in.readNBytes(Integer.parseInt(length.group(1)));
    }
    return head.substring(0, head.indexOf("\r\n"));
  }

  private HttpResponse<String> post(String body) throws Exception {
    return client.send(
        HttpRequest.newBuilder(url(WebhookServer.PATH + "?timeout=10s"))
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(5))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI url(String path) {
    return URI.create("https://localhost:" + server.port() + path);
  }

  private X509Certificate servedCertificate() throws Exception {
    try (SSLSocket socket =
        (SSLSocket)
            trusting(firstCa, secondCa)
                .getSocketFactory()
                .createSocket("localhost", server.port())) {
      socket.setSoTimeout(5000);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  /** Replaces both files as a Secret volume does: each whole, never half-written. */
  private void write(CertificateIssuer.Issued pair) throws Exception {
    Path key = Files.writeString(Files.createTempFile(certDir, "key", ".tmp"), pair.keyPem());
    Path cert =
        Files.writeString(Files.createTempFile(certDir, "crt", ".tmp"), pair.certificatePem());
    Files.move(
        key,
        certDir.resolve(ServingCertificate.KEY_FILE),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
    Files.move(
        cert,
        certDir.resolve(ServingCertificate.CERT_FILE),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  private static SSLContext trusting(CertificateIssuer.Issued... cas) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    for (int i = 0; i < cas.length; i++) {
      store.setCertificateEntry("ca" + i, cas[i].certificate());
    }
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }
}

package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.helm.ChartJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 29 §2, from outside: the webhook in a JVM run as the chart runs the operator (its heap,
 * {@code -XX:+ExitOnOutOfMemoryError}), sent over TLS, as any pod can send it, a junk review of the
 * largest size it takes. It must answer (allowed, no patch), stay up, hold its heap, and give the
 * next pod its gate. Reading the review into a Jackson tree ended that JVM on the first one.
 */
class WebhookHeapIT {
  /**
   * Highest heap occupancy while one review is received and answered, above the idle heap, garbage
   * included: the body's buffers (about three copies of up to 9.1 MiB: TLS, request, body) and what
   * reading it costs, mostly garbage. Measured 0-52 MiB (docs/reliability.md, attack 2).
   */
  private static final long MAX_HEAP_GROWTH = 80L * 1024 * 1024;

  private static final Path GOLDEN = Path.of("src/test/resources/golden/webhook/selected-no-gates");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path certDir;
  private static Process webhook;
  private static BufferedReader answers;
  private static PrintStream commands;
  private static HttpClient client;
  private static int port;

  /** Junk reviews, each filling the body cap (the deep one needs no more). */
  enum Junk {
    /** About three million {@code {}}: a tree of them took some 100 bytes of heap each. */
    emptyObjects("\"metadata\":{\"labels\":{}},\"junk\":[", "{},", "{}]"),
    /** Lists 100,000 deep. */
    deepLists("\"metadata\":{},\"spec\":{},\"junk\":", "[", "]") {
      @Override
      String fill(int room) {
        return "[".repeat(100_000) + "]".repeat(99_999);
      }
    },
    /** One label whose value is the whole body (a label is read, not skipped). */
    hugeLabel("\"metadata\":{\"labels\":{\"a\":\"", "x", "\"}},\"spec\":{}"),
    /** Some 900,000 distinct labels. */
    nearlyAMillionLabels("\"metadata\":{\"labels\":{", "", "\"end\":\"\"}},\"spec\":{}") {
      @Override
      String fill(int room) {
        StringBuilder labels = new StringBuilder(room);
        for (int i = 0; ; i++) {
          String label = "\"" + Integer.toString(i, 36) + "\":\"\",";
          if (labels.length() + label.length() > room) {
            return labels.toString();
          }
          labels.append(label);
        }
      }
    };

    private final String head;
    private final String unit;
    private final String tail;

    Junk(String head, String unit, String tail) {
      this.head = head;
      this.unit = unit;
      this.tail = tail;
    }

    String fill(int room) {
      return unit.repeat(room / unit.length());
    }

    byte[] body() {
      String start =
          "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
              + "\"uid\":\"junk\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
              + "\"namespace\":\"inference\",\"operation\":\"CREATE\",\"object\":{"
              + head;
      String end = tail + "}}}";
      int room = WebhookServer.MAX_REQUEST_BYTES - start.length() - end.length();
      return (start + fill(room) + end).getBytes(StandardCharsets.UTF_8);
    }
  }

  @BeforeAll
  static void startTheWebhookAsTheChartRunsIt() throws Exception {
    CertificateIssuer.Issued ca =
        CertificateIssuer.certificateAuthority("ca", Instant.now(), Duration.ofDays(1));
    CertificateIssuer.Issued serving =
        CertificateIssuer.servingCertificate(
            ca, List.of("localhost"), Instant.now(), Duration.ofDays(1));
    Files.writeString(certDir.resolve(ServingCertificate.KEY_FILE), serving.keyPem());
    Files.writeString(certDir.resolve(ServingCertificate.CERT_FILE), serving.certificatePem());
    webhook =
        new ProcessBuilder(
                ChartJvm.command(
                    WebhookJvmMain.class,
                    certDir.toString(),
                    GOLDEN.resolve("in-modeldeployments.yaml").toString()))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    answers =
        new BufferedReader(new InputStreamReader(webhook.getInputStream(), StandardCharsets.UTF_8));
    commands = new PrintStream(webhook.getOutputStream(), true, StandardCharsets.UTF_8);
    port = Integer.parseInt(expect("serving"));
    client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .sslContext(trusting(ca))
            .connectTimeout(Duration.ofSeconds(5))
            .build();
  }

  @AfterAll
  static void stop() {
    if (webhook != null) {
      webhook.destroy();
    }
  }

  @ParameterizedTest
  @EnumSource(Junk.class)
  void aJunkReviewOfTheCapsSizeIsAnsweredWithinABoundedHeapAndTheNextPodIsGated(Junk junk)
      throws Exception {
    byte[] body = junk.body();
    assertThat(body.length).isLessThanOrEqualTo(WebhookServer.MAX_REQUEST_BYTES);
    commands.println("mark");
    long idle = Long.parseLong(expect("heap"));

    HttpResponse<String> answer = post(body);
    commands.println("peak");
    long grown = Long.parseLong(expect("peak")) - idle;

    System.out.printf(
        "WebhookHeapIT %s: body %d bytes, idle heap %d MiB, peak heap growth %d MiB%n",
        junk, body.length, idle >> 20, grown >> 20);
    assertThat(answer.statusCode()).isEqualTo(200);
    JsonNode response = JSON.readTree(answer.body()).path("response");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
    assertThat(grown).as("peak heap growth, bytes").isLessThan(MAX_HEAP_GROWTH);

    HttpResponse<String> next = post(Files.readAllBytes(GOLDEN.resolve("in-review.json")));
    JsonNode nextResponse = JSON.readTree(next.body()).path("response");
    assertThat(nextResponse.path("uid").asText()).isEqualTo("a1");
    assertThat(
            new String(
                Base64.getDecoder().decode(nextResponse.path("patch").asText()),
                StandardCharsets.UTF_8))
        .contains("\"path\":\"/spec/readinessGates\"", "kvguard.io/pool-verified");
  }

  private static HttpResponse<String> post(byte[] body) throws Exception {
    try {
      return client.send(
          HttpRequest.newBuilder(URI.create("https://localhost:" + port + WebhookServer.PATH))
              .header("Content-Type", "application/json")
              .timeout(Duration.ofSeconds(30))
              .POST(HttpRequest.BodyPublishers.ofByteArray(body))
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      webhook.waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
      throw new AssertionError(
          "no answer ("
              + e
              + "); the webhook JVM "
              + (webhook.isAlive() ? "runs" : "exited " + webhook.exitValue() + ": " + rest()),
          e);
    }
  }

  /** The word after {@code prefix} on the child's next answer; its log lines are passed over. */
  private static String expect(String prefix) throws IOException {
    for (String line = answers.readLine(); line != null; line = answers.readLine()) {
      if (line.startsWith(prefix + " ")) {
        return line.substring(prefix.length() + 1);
      }
    }
    return fail("the webhook JVM ended before '%s' (exit %s)", prefix, webhook.exitValue());
  }

  private static String rest() {
    return String.join(" / ", answers.lines().toList());
  }

  private static SSLContext trusting(CertificateIssuer.Issued ca) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setCertificateEntry("ca", ca.certificate());
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }
}

package io.kvguard.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.webhook.AdmissionHandler;
import io.kvguard.webhook.CertificateIssuer;
import io.kvguard.webhook.ServingCertificate;
import io.kvguard.webhook.WebhookServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * How long the webhook takes to answer, as the API server sees it: HTTPS round trips over
 * kept-alive connections (the API server reuses its connections), a realistic pod (4 containers, 60
 * environment variables each, managed fields: about 30 KB of review) in a namespace of 40
 * ModelDeployments, one of which selects it. Prints p50/p99/p99.9/max per client concurrency, and
 * the same for a new TLS connection per request (no reuse: the worst case). Run
 * (docs/benchmarks.md, "Webhook latency"):
 *
 * <pre>
 * mvn -B -ntp package -DskipTests
 * java -XX:TieredStopAtLevel=1 -cp operator/bench/target/kvguard-bench.jar io.kvguard.bench.WebhookLatency 10000
 * </pre>
 */
public final class WebhookLatency {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Time inside the server's handler (read, decide, answer), per request of the current run. */
  private static final java.util.concurrent.ConcurrentLinkedQueue<Long> SERVER_NANOS =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private WebhookLatency() {}

  public static void main(String[] args) throws Exception {
    // "Connection: close" is a header the JDK's client refuses to send unless told (JDK 17
    // jdk.internal.net.http.common.Utils, jdk.httpclient.allowRestrictedHeaders); read once, when
    // the client classes load, so before the first client.
    System.setProperty("jdk.httpclient.allowRestrictedHeaders", "connection");
    int requests = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    Path dir = Files.createTempDirectory("kvguard-webhook-bench");
    CertificateIssuer.Issued ca =
        CertificateIssuer.certificateAuthority("bench-ca", Instant.now(), Duration.ofDays(1));
    CertificateIssuer.Issued pair =
        CertificateIssuer.servingCertificate(
            ca, List.of("localhost"), Instant.now(), Duration.ofDays(1));
    Files.writeString(dir.resolve(ServingCertificate.CERT_FILE), pair.certificatePem());
    Files.writeString(dir.resolve(ServingCertificate.KEY_FILE), pair.keyPem());
    List<ModelDeployment> policies = policies(40);
    byte[] review = review();
    System.out.printf(
        "review %d bytes, %d ModelDeployments in the namespace, %d requests per run%n",
        review.length, policies.size(), requests);
    AdmissionHandler handler =
        new AdmissionHandler(namespace -> policies, new SimpleMeterRegistry());
    try (WebhookServer server =
        new WebhookServer(
            0,
            new ServingCertificate(dir),
            body -> {
              long t0 = System.nanoTime();
              byte[] answer = handler.apply(body);
              SERVER_NANOS.add(System.nanoTime() - t0);
              return answer;
            })) {
      server.start();
      URI url =
          URI.create("https://localhost:" + server.port() + WebhookServer.PATH + "?timeout=10s");
      SSLContext trust = trusting(ca);
      run("warm-up, kept alive, 4 clients", url, trust, review, requests / 2, 4, true);
      for (int clients : new int[] {1, 4, 16}) {
        run("kept alive, " + clients + " clients", url, trust, review, requests, clients, true);
      }
      run(
          "new TLS connection per request, 4 clients",
          url,
          trust,
          review,
          Math.min(requests, 2_000),
          4,
          false);
    }
  }

  private static void run(
      String name,
      URI url,
      SSLContext trust,
      byte[] review,
      int requests,
      int clients,
      boolean keepAlive)
      throws Exception {
    SERVER_NANOS.clear();
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    List<Future<long[]>> results = new ArrayList<>();
    long start = System.nanoTime();
    for (int c = 0; c < clients; c++) {
      results.add(
          pool.submit(
              () -> {
                HttpClient client = newClient(trust);
                long[] times = new long[requests / clients];
                for (int i = 0; i < times.length; i++) {
                  if (!keepAlive) {
                    client = newClient(trust);
                  }
                  long t0 = System.nanoTime();
                  HttpRequest.Builder request =
                      HttpRequest.newBuilder(url)
                          .header("Content-Type", "application/json")
                          .POST(HttpRequest.BodyPublishers.ofByteArray(review));
                  if (!keepAlive) {
                    // Each connection ends with its answer. Without it every client left behind
                    // kept its connection open (a JDK 17 HttpClient cannot be closed), and past
                    // the server's 256 connections the newest, not yet served, was the one it
                    // closed, in its TLS handshake (WebhookServer keeps served connections first).
                    request.header("Connection", "close");
                  }
                  HttpResponse<byte[]> answer =
                      client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
                  times[i] = System.nanoTime() - t0;
                  if (answer.statusCode() != 200
                      || !JSON.readTree(answer.body()).path("response").has("patch")) {
                    throw new IllegalStateException("unexpected answer " + answer.statusCode());
                  }
                }
                return times;
              }));
    }
    long[] all = new long[0];
    for (Future<long[]> result : results) {
      long[] times = result.get();
      long[] merged = Arrays.copyOf(all, all.length + times.length);
      System.arraycopy(times, 0, merged, all.length, times.length);
      all = merged;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    Arrays.sort(all);
    System.out.printf(
        "%-45s n=%6d  %7.0f/s  p50 %6.2f ms  p99 %6.2f ms  p99.9 %6.2f ms  max %7.2f ms%n",
        name,
        all.length,
        all.length / seconds,
        ms(all, 0.50),
        ms(all, 0.99),
        ms(all, 0.999),
        all[all.length - 1] / 1e6);
    long[] server = SERVER_NANOS.stream().mapToLong(Long::longValue).sorted().toArray();
    System.out.printf(
        "%-45s n=%6d  %9s  p50 %6.2f ms  p99 %6.2f ms  p99.9 %6.2f ms  max %7.2f ms%n",
        "  of which in the handler",
        server.length,
        "",
        ms(server, 0.50),
        ms(server, 0.99),
        ms(server, 0.999),
        server[server.length - 1] / 1e6);
  }

  private static double ms(long[] sorted, double quantile) {
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)] / 1e6;
  }

  private static HttpClient newClient(SSLContext trust) {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(trust).build();
  }

  static List<ModelDeployment> policies(int count) {
    List<ModelDeployment> policies = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ModelDeploymentSpec spec = new ModelDeploymentSpec();
      spec.setModel("model-" + i);
      spec.setContextWindow(131072L);
      RoleSpec role = new RoleSpec();
      role.setName("serve");
      role.setEngine(Engine.values()[0]);
      role.setSelector(
          new LabelSelectorBuilder()
              .addToMatchLabels("app", i == count - 1 ? "glm" : "model-" + i)
              .addNewMatchExpression()
              .withKey("tier")
              .withOperator("In")
              .withValues("a", "b", "decode")
              .endMatchExpression()
              .build());
      spec.setRoles(List.of(role));
      ModelDeployment md = new ModelDeployment();
      md.setMetadata(
          new ObjectMetaBuilder().withName("model-" + i).withNamespace("inference").build());
      md.setSpec(spec);
      policies.add(md);
    }
    return policies;
  }

  static byte[] review() throws Exception {
    ObjectNode pod = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Pod");
    ObjectNode metadata =
        pod.putObject("metadata")
            .put("generateName", "glm-decode-7d9f8b6c5-")
            .put("namespace", "inference");
    metadata
        .putObject("labels")
        .put("app", "glm")
        .put("tier", "decode")
        .put("pod-template-hash", "7d9f8b6c5");
    ArrayNode managed = metadata.putArray("managedFields");
    for (int i = 0; i < 4; i++) {
      ObjectNode entry =
          managed.addObject().put("manager", "kube-controller-manager").put("operation", "Update");
      ObjectNode fields = entry.putObject("fieldsV1").putObject("f:spec").putObject("f:containers");
      for (int e = 0; e < 60; e++) {
        fields.putObject("k:{\"name\":\"ENV_" + e + "\"}").putObject("f:value");
      }
    }
    ObjectNode spec = pod.putObject("spec");
    ArrayNode containers = spec.putArray("containers");
    for (int c = 0; c < 4; c++) {
      ObjectNode container =
          containers.addObject().put("name", "c" + c).put("image", "lmsysorg/sglang:v0.5.6");
      ArrayNode env = container.putArray("env");
      for (int e = 0; e < 60; e++) {
        env.addObject().put("name", "ENV_" + e).put("value", "value-of-environment-variable-" + e);
      }
      container.putArray("ports").addObject().put("name", "http").put("containerPort", 30000 + c);
    }
    ObjectNode request = JSON.createObjectNode().put("uid", "bench");
    request.putObject("kind").put("group", "").put("version", "v1").put("kind", "Pod");
    request.putObject("resource").put("group", "").put("version", "v1").put("resource", "pods");
    request.put("namespace", "inference").put("operation", "CREATE").set("object", pod);
    ObjectNode review =
        JSON.createObjectNode()
            .put("apiVersion", "admission.k8s.io/v1")
            .put("kind", "AdmissionReview");
    review.set("request", request);
    return JSON.writeValueAsBytes(review);
  }

  private static SSLContext trusting(CertificateIssuer.Issued ca) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setCertificateEntry("ca", ca.certificate());
    TrustManagerFactory factory =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}

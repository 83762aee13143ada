package io.kvguard.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * sgl-model-gateway in PD mode on 127.0.0.1, started with no workers and no service discovery, as
 * far as a proof needs it. The shapes are those of sgl-project/sglang v0.5.18 (read through
 * bytedance-iaas/sglang), {@code sgl-model-gateway/src}: the worker API ({@code server.rs:633-638};
 * {@code core/worker_service.rs}: POST 202 with worker_id and location, GET of a worker whose job
 * runs or failed shows {@code job_status}, one registered shows the worker, DELETE 202, an unknown
 * ID 404 WORKER_NOT_FOUND), registration as a queued job that checks the worker's {@code /health}
 * before the worker is marked healthy ({@code core/steps/worker/local/mod.rs}), and {@code POST
 * /generate} sent to a prefill and a decode worker with the bootstrap fields added, the prefill
 * worker's error or else the decode worker's answer returned ({@code routers/http/pd_router.rs}),
 * and with no worker its own 503 "No available servers" ({@code pd_router.rs:191-197}, {@code
 * routers/error.rs}). Without registrations it is what a discovery router answers while every pod
 * is un-Ready.
 */
public final class FakeProofRouter implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private record Worker(
      String url, String type, Integer bootstrapPort, JsonNode labels, String job, boolean ready) {}

  private final HttpServer server;
  private final ExecutorService executor;
  private final HttpClient client = HttpClient.newHttpClient();
  private final Map<String, Worker> workers = new ConcurrentHashMap<>();
  private final AtomicInteger turn = new AtomicInteger();
  private final AtomicLong added = new AtomicLong();
  private final AtomicLong removed = new AtomicLong();
  private final AtomicLong generated = new AtomicLong();
  private final AtomicInteger workersAtFirstGenerate = new AtomicInteger(-1);
  private volatile boolean refuseRegistrations;

  public FakeProofRouter() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    executor =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread thread = new Thread(r, "fake-proof-router");
              thread.setDaemon(true);
              return thread;
            });
    server.setExecutor(executor);
    server.createContext("/", this::handle);
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Every registration job fails (the router cannot reach the workers), as the real job does when
   * the worker's /health does not answer.
   */
  public FakeProofRouter refuseRegistrations() {
    refuseRegistrations = true;
    return this;
  }

  /** A worker already on the router that kvguard did not add (another model's, say). */
  public FakeProofRouter withWorker(String url, String type) {
    workers.put(UUID.randomUUID().toString(), new Worker(url, type, null, null, null, true));
    return this;
  }

  public int workers() {
    return workers.size();
  }

  public long added() {
    return added.get();
  }

  public long removed() {
    return removed.get();
  }

  public long generated() {
    return generated.get();
  }

  /** How many workers were registered when the first prompt arrived (-1 before any). */
  public int workersAtFirstGenerate() {
    return workersAtFirstGenerate.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      String path = exchange.getRequestURI().getPath();
      String method = exchange.getRequestMethod();
      if (path.equals("/workers") && method.equals("POST")) {
        add(exchange, JSON.readTree(body));
      } else if (path.equals("/workers") && method.equals("GET")) {
        send(exchange, 200, list());
      } else if (path.startsWith("/workers/")) {
        worker(exchange, path.substring("/workers/".length()), method);
      } else if (path.equals("/generate") && method.equals("POST")) {
        generate(exchange, body);
      } else {
        send(exchange, 404, JSON.createObjectNode().put("error", "not found"));
      }
    } catch (IOException | RuntimeException e) {
      // The client gave up; nothing to report.
    }
  }

  private void add(HttpExchange exchange, JsonNode config) throws IOException {
    String url = config.path("url").asText();
    String id = UUID.randomUUID().toString();
    Worker pending =
        new Worker(
            url,
            config.path("worker_type").asText("regular"),
            config.hasNonNull("bootstrap_port") ? config.get("bootstrap_port").asInt() : null,
            config.get("labels"),
            "pending",
            false);
    workers.put(id, pending);
    added.incrementAndGet();
    executor.submit(() -> register(id, pending));
    ObjectNode answer =
        JSON.createObjectNode()
            .put("status", "accepted")
            .put("worker_id", id)
            .put("url", url)
            .put("location", "/workers/" + id)
            .put("message", "Worker addition queued for background processing");
    exchange.getResponseHeaders().set("Location", "/workers/" + id);
    send(exchange, 202, answer);
  }

  /** The job: the worker's /health, then the worker is registered and marked healthy. */
  private void register(String id, Worker pending) {
    boolean healthy = false;
    if (!refuseRegistrations) {
      try {
        healthy =
            client
                    .send(
                        HttpRequest.newBuilder(URI.create(pending.url() + "/health")).build(),
                        HttpResponse.BodyHandlers.discarding())
                    .statusCode()
                == 200;
      } catch (IOException | InterruptedException e) {
        healthy = false;
      }
    }
    Worker done =
        new Worker(
            pending.url(),
            pending.type(),
            pending.bootstrapPort(),
            pending.labels(),
            healthy ? null : "failed",
            healthy);
    workers.computeIfPresent(id, (k, v) -> done);
  }

  private void worker(HttpExchange exchange, String id, String method) throws IOException {
    Worker worker = workers.get(id);
    if (worker == null) {
      send(
          exchange,
          404,
          JSON.createObjectNode()
              .put("error", "Worker " + id + " not found")
              .put("code", "WORKER_NOT_FOUND"));
      return;
    }
    if (method.equals("DELETE")) {
      workers.remove(id);
      removed.incrementAndGet();
      send(
          exchange,
          202,
          JSON.createObjectNode()
              .put("status", "accepted")
              .put("worker_id", id)
              .put("message", "Worker removal queued for background processing"));
      return;
    }
    send(exchange, 200, info(id, worker));
  }

  private ObjectNode info(String id, Worker worker) {
    ObjectNode info =
        JSON.createObjectNode()
            .put("id", id)
            .put("url", worker.url())
            .put("model_id", worker.ready() ? "zai-org/GLM-5.3" : "unknown")
            .put("worker_type", worker.ready() ? worker.type() : "unknown")
            .put("is_healthy", worker.ready())
            .put("load", 0)
            .put("connection_mode", worker.ready() ? "Http" : "unknown")
            .put("disable_health_check", false);
    if (worker.ready() && worker.bootstrapPort() != null) {
      info.put("bootstrap_port", worker.bootstrapPort());
    }
    if (worker.labels() != null && worker.labels().size() > 0) {
      info.set("metadata", worker.labels());
    }
    if (worker.job() != null) {
      ObjectNode job =
          info.putObject("job_status")
              .put("job_type", "AddWorker")
              .put("worker_url", worker.url())
              .put("status", worker.job())
              .put("timestamp", System.currentTimeMillis() / 1000);
      if (worker.job().equals("failed")) {
        job.put("message", "Health check failed for " + worker.url());
      }
    }
    return info;
  }

  private ObjectNode list() {
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode all = answer.putArray("workers");
    workers.forEach((id, worker) -> all.add(info(id, worker)));
    answer.put("total", workers.size());
    return answer;
  }

  private void generate(HttpExchange exchange, byte[] body) throws IOException {
    generated.incrementAndGet();
    workersAtFirstGenerate.compareAndSet(-1, workers.size());
    List<Worker> prefill = ready("prefill");
    List<Worker> decode = ready("decode");
    if (prefill.isEmpty() || decode.isEmpty()) {
      String type = prefill.isEmpty() ? "prefill" : "decode";
      exchange.getResponseHeaders().set("X-SMG-Error-Code", "server_selection_failed");
      ObjectNode error = JSON.createObjectNode();
      error
          .putObject("error")
          .put("type", "Service Unavailable")
          .put("code", "server_selection_failed")
          .put(
              "message",
              "No available servers: No "
                  + type
                  + " workers available. Please check if "
                  + type
                  + " servers are configured and healthy.");
      send(exchange, 503, error);
      return;
    }
    int n = turn.getAndIncrement();
    Worker p = prefill.get(n % prefill.size());
    Worker d = decode.get(n % decode.size());
    String text = new String(body, StandardCharsets.UTF_8);
    String routed =
        "{\"bootstrap_host\":\"127.0.0.1\",\"bootstrap_port\":"
            + p.bootstrapPort()
            + ",\"bootstrap_room\":"
            + ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE)
            + ","
            + text.substring(text.indexOf('{') + 1);
    try {
      HttpResponse<byte[]> fromPrefill = post(p, routed);
      HttpResponse<byte[]> answer =
          fromPrefill.statusCode() / 100 != 2 ? fromPrefill : post(d, routed);
      exchange
          .getResponseHeaders()
          .set("Content-Type", answer.headers().firstValue("content-type").orElse("text/plain"));
      exchange.sendResponseHeaders(answer.statusCode(), answer.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer.body());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private List<Worker> ready(String type) {
    return workers.values().stream().filter(w -> w.ready() && w.type().equals(type)).toList();
  }

  private HttpResponse<byte[]> post(Worker worker, String body)
      throws IOException, InterruptedException {
    return client.send(
        HttpRequest.newBuilder(URI.create(worker.url() + "/generate"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void send(HttpExchange exchange, int status, JsonNode body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

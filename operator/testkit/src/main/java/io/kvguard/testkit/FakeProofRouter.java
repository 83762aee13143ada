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
 * bytedance-iaas/sglang), {@code sgl-model-gateway/src}:
 *
 * <ul>
 *   <li>The worker API ({@code server.rs:633-638}; {@code core/worker_service.rs}): POST answers
 *       202 with a worker_id reserved for the URL, the same ID again for a URL the router already
 *       knows ({@code core/worker_registry.rs:301-303}); GET /workers lists registered workers only
 *       ({@code worker_service.rs:262-282}); GET /workers/{id} shows a registered worker, with the
 *       {@code job_status} of a job on its URL, or, for an ID whose worker is not registered, a
 *       placeholder of type "unknown" carrying the job's status ({@code worker_service.rs:284-311};
 *       openai-protocol 1.0.0 {@code WorkerInfo::pending}); DELETE queues a removal and answers 202
 *       for any ID the router maps to a URL ({@code worker_service.rs:314-336}); an ID that is no
 *       UUID answers 400, an unknown one 404 WORKER_NOT_FOUND.
 *   <li>Jobs, keyed by worker URL ({@code core/job_queue.rs}): a finished job's status is dropped,
 *       a failed one's kept (five minutes there; here until the router closes). Adding checks the
 *       worker's {@code /health}, fails for a URL already registered ("Worker … already exists",
 *       {@code core/steps/worker/local/create_worker.rs:50-59}), and marks the worker healthy last;
 *       a failed registration keeps its URL's ID reserved. Removing a URL with no registered worker
 *       fails ("Worker … not found", {@code local/find_workers_to_remove.rs}).
 *   <li>{@code POST /generate} sent to a prefill and a decode worker with the bootstrap fields
 *       added ({@code routers/http/pd_router.rs:238-296}). A worker's error is not passed on as it
 *       came: the prefill worker's becomes the router's own error whose message is "Prefill server
 *       error (STATUS REASON): " and the worker's body ({@code pd_router.rs:1294-1333}), the decode
 *       worker's the router's error carrying the worker's {@code error.message} ({@code
 *       pd_router.rs:574-610}); with no worker, its own 503 "No available servers" ({@code
 *       pd_router.rs:191-197}, {@code routers/error.rs}). Unlike the router, the decode worker is
 *       sent the prompt only after the prefill worker answered 2xx (the router sends both at once
 *       and drops the decode request when prefill fails, {@code pd_router.rs:711-759}).
 *   <li>The client's {@code Authorization} header is passed on to both workers with the prompt
 *       ({@code pd_router.rs:1358-1378}, {@code routers/header_utils.rs:207-219}); with an {@code
 *       --api-key} ({@link #withApiKey}), the worker routes and {@code /generate} answer 401 with
 *       no body to a request without {@code Bearer <key>} ({@code server.rs:544-586, 632-655},
 *       {@code middleware.rs:114-144}); without one, anyone who reaches the router may add workers.
 * </ul>
 *
 * Without registrations it is what a discovery router answers while every pod is un-Ready.
 */
public final class FakeProofRouter implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String UUID_FORM =
      "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

  private record Worker(String url, String type, Integer bootstrapPort, JsonNode labels) {}

  /** A job's status, as {@code JobStatus} shows it. */
  private record Job(String type, String status, String message) {}

  private final HttpServer server;
  private final ExecutorService executor;
  private final HttpClient client = HttpClient.newHttpClient();
  private final Map<String, Worker> registered = new ConcurrentHashMap<>();
  private final Map<String, String> idsByUrl = new ConcurrentHashMap<>();
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();
  private final Map<String, String> racing = new ConcurrentHashMap<>();
  private final AtomicInteger turn = new AtomicInteger();
  private final AtomicLong added = new AtomicLong();
  private final AtomicLong removed = new AtomicLong();
  private final AtomicLong generated = new AtomicLong();
  private final AtomicLong requests = new AtomicLong();
  private final AtomicInteger workersAtFirstGenerate = new AtomicInteger(-1);
  private volatile boolean refuseRegistrations;
  private volatile boolean holdRegistrations;
  private volatile long generateDelayMillis;
  private volatile String apiKey;
  private volatile int proxyStatus;
  private volatile Worker tenantWorker;

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

  /**
   * Every registration job keeps running (a worker whose /health the router retries until its
   * worker_startup_timeout_secs, 1800 s by default).
   */
  public FakeProofRouter holdRegistrations() {
    holdRegistrations = true;
    return this;
  }

  /**
   * Every {@code POST /generate} is answered only after {@code delay} (a router whose workers are
   * slow to answer, or one that holds requests back).
   */
  public FakeProofRouter holdGenerate(java.time.Duration delay) {
    generateDelayMillis = delay.toMillis();
    return this;
  }

  /** The router's {@code --api-key}: every worker route and /generate require it. */
  public FakeProofRouter withApiKey(String key) {
    apiKey = key;
    return this;
  }

  /**
   * An authenticating proxy on the Service's port (a mesh sidecar's authorization policy, say) in
   * front of a router without {@code --api-key}: a request without {@code Authorization} is
   * answered {@code status} by the proxy; the rest reach the router. Another tenant reaching the
   * router's pod directly is not stopped by it ({@link #withTenantPrefillAddedAfterTheListing}).
   */
  public FakeProofRouter behindAProxyAnsweringAnonymousRequests(int status) {
    proxyStatus = status;
    return this;
  }

  /**
   * Another tenant who reaches the router adds a prefill worker of its own at {@code url} right
   * after the router first lists its workers, through the worker API and without the router's key:
   * registered when the router has no {@code --api-key}, refused (401) when it has one.
   */
  public FakeProofRouter withTenantPrefillAddedAfterTheListing(String url, int bootstrapPort) {
    tenantWorker = new Worker(url, "prefill", bootstrapPort, null);
    return this;
  }

  /** A worker already on the router that kvguard did not add (another model's, say). */
  public FakeProofRouter withWorker(String url, String type) {
    register(url, new Worker(url, type, null, null));
    return this;
  }

  /**
   * A worker at {@code url} that someone else adds after kvguard listed the workers and before its
   * own POST for that URL arrives.
   */
  public FakeProofRouter withWorkerAddedBeforeThePostFor(String url, String type) {
    racing.put(url, type);
    return this;
  }

  /** Whether a worker at {@code url} is registered. */
  public boolean lists(String url) {
    return registered.values().stream().anyMatch(w -> w.url().equals(url));
  }

  /** The workers registered, as GET /workers lists them. */
  public int workers() {
    return registered.size();
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

  /** Every request the router received, on any path. */
  public long requests() {
    return requests.get();
  }

  /** How many workers were registered when the first prompt arrived (-1 before any). */
  public int workersAtFirstGenerate() {
    return workersAtFirstGenerate.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    requests.incrementAndGet();
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      String path = exchange.getRequestURI().getPath();
      String method = exchange.getRequestMethod();
      String key = apiKey;
      String authorization = exchange.getRequestHeaders().getFirst("Authorization");
      if (proxyStatus != 0 && authorization == null) {
        exchange.sendResponseHeaders(proxyStatus, -1);
        return;
      }
      if (key != null
          && (path.startsWith("/workers") || path.equals("/generate"))
          && !("Bearer " + key).equals(authorization)) {
        exchange.sendResponseHeaders(401, -1);
        return;
      }
      if (path.equals("/workers") && method.equals("POST")) {
        add(exchange, JSON.readTree(body));
      } else if (path.equals("/workers") && method.equals("GET")) {
        ObjectNode listed = list();
        Worker tenant = tenantWorker;
        if (tenant != null && apiKey == null) {
          tenantWorker = null;
          register(tenant.url(), tenant);
        }
        send(exchange, 200, listed);
      } else if (path.startsWith("/workers/")) {
        worker(exchange, path.substring("/workers/".length()), method);
      } else if (path.equals("/generate") && method.equals("POST")) {
        generate(exchange, body, authorization);
      } else {
        exchange.sendResponseHeaders(404, -1);
      }
    } catch (IOException | RuntimeException e) {
      // The client gave up; nothing to report.
    }
  }

  private String register(String url, Worker worker) {
    String id = idsByUrl.computeIfAbsent(url, u -> UUID.randomUUID().toString());
    registered.put(id, worker);
    return id;
  }

  private void add(HttpExchange exchange, JsonNode config) throws IOException {
    String url = config.path("url").asText();
    String racer = racing.remove(url);
    if (racer != null) {
      register(url, new Worker(url, racer, null, null));
    }
    String id = idsByUrl.computeIfAbsent(url, u -> UUID.randomUUID().toString());
    Worker wanted =
        new Worker(
            url,
            config.path("worker_type").asText("regular"),
            config.hasNonNull("bootstrap_port") ? config.get("bootstrap_port").asInt() : null,
            config.get("labels"));
    jobs.put(url, new Job("AddWorker", "pending", null));
    added.incrementAndGet();
    executor.submit(() -> addJob(id, wanted));
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
  private void addJob(String id, Worker wanted) {
    String url = wanted.url();
    jobs.put(url, new Job("AddWorker", "processing", null));
    if (holdRegistrations) {
      return;
    }
    if (lists(url)) {
      jobs.put(url, new Job("AddWorker", "failed", "Worker " + url + " already exists"));
      return;
    }
    boolean healthy = false;
    if (!refuseRegistrations) {
      try {
        healthy =
            client
                    .send(
                        HttpRequest.newBuilder(URI.create(url + "/health")).build(),
                        HttpResponse.BodyHandlers.discarding())
                    .statusCode()
                == 200;
      } catch (IOException | InterruptedException e) {
        healthy = false;
      }
    }
    if (!healthy) {
      jobs.put(url, new Job("AddWorker", "failed", "Health check failed for " + url));
      return;
    }
    registered.put(id, wanted);
    jobs.remove(url);
  }

  private void removeJob(String url) {
    jobs.put(url, new Job("RemoveWorker", "processing", null));
    String id = idsByUrl.get(url);
    Worker worker = id == null ? null : registered.get(id);
    if (worker == null || !worker.url().equals(url)) {
      jobs.put(url, new Job("RemoveWorker", "failed", "Worker " + url + " not found"));
      return;
    }
    registered.remove(id);
    idsByUrl.remove(url);
    jobs.remove(url);
    removed.incrementAndGet();
  }

  private void worker(HttpExchange exchange, String id, String method) throws IOException {
    if (!id.matches(UUID_FORM)) {
      sendError(exchange, 400, "Invalid worker_id '" + id + "' (expected UUID)", "BAD_REQUEST");
      return;
    }
    Worker worker = registered.get(id);
    String url =
        worker != null
            ? worker.url()
            : idsByUrl.entrySet().stream()
                .filter(e -> e.getValue().equals(id))
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(null);
    Job job = url == null ? null : jobs.get(url);
    if (worker == null && (url == null || (job == null && !method.equals("DELETE")))) {
      sendError(exchange, 404, "Worker " + id + " not found", "WORKER_NOT_FOUND");
      return;
    }
    if (method.equals("DELETE")) {
      jobs.put(url, new Job("RemoveWorker", "pending", null));
      executor.submit(() -> removeJob(url));
      send(
          exchange,
          202,
          JSON.createObjectNode()
              .put("status", "accepted")
              .put("worker_id", id)
              .put("message", "Worker removal queued for background processing"));
      return;
    }
    send(exchange, 200, info(id, url, worker, job));
  }

  private ObjectNode info(String id, String url, Worker worker, Job job) {
    boolean known = worker != null;
    ObjectNode info =
        JSON.createObjectNode()
            .put("id", id)
            .put("url", url)
            .put("model_id", known ? "zai-org/GLM-5.3" : "unknown")
            .put("priority", known ? 50 : 0)
            .put("cost", 1.0)
            .put("worker_type", known ? worker.type() : "unknown")
            .put("is_healthy", known)
            .put("load", 0)
            .put("connection_mode", known ? "HTTP" : "unknown");
    if (known && worker.bootstrapPort() != null) {
      info.put("bootstrap_port", worker.bootstrapPort());
    }
    if (known && worker.labels() != null && worker.labels().size() > 0) {
      info.set("metadata", worker.labels());
    }
    info.put("disable_health_check", false);
    if (job != null) {
      info.putObject("job_status")
          .put("job_type", job.type())
          .put("worker_url", url)
          .put("status", job.status())
          .put("message", job.message())
          .put("timestamp", System.currentTimeMillis() / 1000);
    }
    return info;
  }

  private ObjectNode list() {
    ObjectNode answer = JSON.createObjectNode();
    ArrayNode all = answer.putArray("workers");
    registered.forEach((id, worker) -> all.add(info(id, worker.url(), worker, null)));
    answer.put("total", registered.size());
    return answer;
  }

  private void generate(HttpExchange exchange, byte[] body, String authorization)
      throws IOException {
    generated.incrementAndGet();
    workersAtFirstGenerate.compareAndSet(-1, registered.size());
    if (generateDelayMillis > 0) {
      try {
        Thread.sleep(generateDelayMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    List<Worker> prefill = ready("prefill");
    List<Worker> decode = ready("decode");
    if (prefill.isEmpty() || decode.isEmpty()) {
      String type = prefill.isEmpty() ? "prefill" : "decode";
      sendRouterError(
          exchange,
          503,
          "server_selection_failed",
          "No available servers: No "
              + type
              + " workers available. Please check if "
              + type
              + " servers are configured and healthy.");
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
      HttpResponse<byte[]> fromPrefill = post(p, routed, authorization);
      int status = fromPrefill.statusCode();
      if (status / 100 != 2) {
        // pd_router.rs:1294-1333: the prefill worker's body becomes part of the router's message.
        sendRouterError(
            exchange,
            routerStatus(status),
            "prefill_" + codeSuffix(status),
            "Prefill server error ("
                + status
                + " "
                + reason(status)
                + "): "
                + new String(fromPrefill.body(), StandardCharsets.UTF_8));
        return;
      }
      HttpResponse<byte[]> answer = post(d, routed, authorization);
      if (answer.statusCode() / 100 != 2) {
        // pd_router.rs:574-610: only the decode worker's error.message (or message) is kept.
        sendRouterError(
            exchange,
            routerStatus(answer.statusCode()),
            "decode_" + codeSuffix(answer.statusCode()),
            decodeMessage(answer.body()));
        return;
      }
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

  /** The status the router answers for a worker's error status (the error::* helper it picks). */
  private static int routerStatus(int worker) {
    return switch (worker) {
      case 400, 404, 500, 502, 503 -> worker;
      default -> 500;
    };
  }

  private static String codeSuffix(int worker) {
    return switch (worker) {
      case 400 -> "bad_request";
      case 404 -> "not_found";
      case 500 -> "internal_error";
      case 502 -> "bad_gateway";
      case 503 -> "unavailable";
      default -> "error";
    };
  }

  /** The canonical reason phrase of a status, as the http crate's StatusCode prints it. */
  private static String reason(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 404 -> "Not Found";
      case 413 -> "Payload Too Large";
      case 422 -> "Unprocessable Entity";
      case 429 -> "Too Many Requests";
      case 500 -> "Internal Server Error";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      default -> "<unknown status code>";
    };
  }

  private static String decodeMessage(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8);
    try {
      JsonNode json = JSON.readTree(body);
      JsonNode nested = json == null ? null : json.path("error").get("message");
      if (nested != null && nested.isTextual()) {
        return nested.asText();
      }
      JsonNode flat = json == null ? null : json.get("message");
      return flat != null && flat.isTextual() ? flat.asText() : text;
    } catch (IOException e) {
      return text;
    }
  }

  private List<Worker> ready(String type) {
    return registered.values().stream().filter(w -> w.type().equals(type)).toList();
  }

  /** The client's Authorization goes along ({@code pd_router.rs:1358-1378}). */
  private HttpResponse<byte[]> post(Worker worker, String body, String authorization)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(worker.url() + "/generate"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  /** routers/error.rs:55-81: {"error": {"type", "code", "message"}} and X-SMG-Error-Code. */
  private static void sendRouterError(
      HttpExchange exchange, int status, String code, String message) throws IOException {
    exchange.getResponseHeaders().set("X-SMG-Error-Code", code);
    ObjectNode error = JSON.createObjectNode();
    error.putObject("error").put("type", reason(status)).put("code", code).put("message", message);
    send(exchange, status, error);
  }

  /** worker_service.rs:77-85: {"error", "code"}. */
  private static void sendError(HttpExchange exchange, int status, String error, String code)
      throws IOException {
    send(exchange, status, JSON.createObjectNode().put("error", error).put("code", code));
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

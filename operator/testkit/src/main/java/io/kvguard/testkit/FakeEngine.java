package io.kvguard.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine endpoint on 127.0.0.1 that answers what it is told, path by path, and counts the
 * requests it receives. Answers can be swapped while it runs (an engine "restarting" with another
 * pool).
 */
public final class FakeEngine implements AutoCloseable {

  /** What one path answers. {@code delayMillis} holds the answer back (a hung engine). */
  public record Answer(int status, String contentType, byte[] body, long delayMillis) {
    public static Answer json(String body) {
      return new Answer(200, "application/json", body.getBytes(StandardCharsets.UTF_8), 0);
    }

    public static Answer prometheus(String body) {
      return new Answer(
          200,
          "text/plain; version=0.0.4; charset=utf-8",
          body.getBytes(StandardCharsets.UTF_8),
          0);
    }

    public static Answer status(int status) {
      return new Answer(
          status,
          "application/json",
          "{\"detail\":\"Not Found\"}".getBytes(StandardCharsets.UTF_8),
          0);
    }

    /** The same answer, held back {@code millis} (an engine that answers slowly). */
    public Answer delayedBy(long millis) {
      return new Answer(status, contentType, body, millis);
    }
  }

  private final HttpServer server;
  private final ExecutorService executor;
  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  private final Map<String, java.util.function.Function<byte[], Answer>> computed =
      new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> hits = new ConcurrentHashMap<>();
  private final Map<String, byte[]> lastBodies = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();
  private final List<String> authorizations = new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile String requiredBearer;

  public FakeEngine() throws IOException {
    this(0);
  }

  public FakeEngine(int port) throws IOException {
    this(InetAddress.getLoopbackAddress(), port);
  }

  /** Binds elsewhere than loopback: the fake-engine image listens on every interface of its pod. */
  public FakeEngine(InetAddress bindAddress, int port) throws IOException {
    this(HttpServer.create(new InetSocketAddress(bindAddress, port), 64));
  }

  /** Speaks https on loopback, as the configurator sets it up (a test's own CA and certificate). */
  public FakeEngine(com.sun.net.httpserver.HttpsConfigurator tls) throws IOException {
    this(httpsServer(tls));
  }

  private static HttpServer httpsServer(com.sun.net.httpserver.HttpsConfigurator tls)
      throws IOException {
    com.sun.net.httpserver.HttpsServer https =
        com.sun.net.httpserver.HttpsServer.create(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    https.setHttpsConfigurator(tls);
    return https;
  }

  private FakeEngine(HttpServer server) {
    this.server = server;
    executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread thread = new Thread(r, "fake-engine");
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

  public FakeEngine answer(String path, Answer answer) {
    computed.remove(path);
    answers.put(path, answer);
    return this;
  }

  /**
   * What a path answers, decided by the request's body (an engine whose answer depends on the
   * prompt's length); replaces a fixed answer of the same path.
   */
  public FakeEngine answerBy(String path, java.util.function.Function<byte[], Answer> byBody) {
    answers.remove(path);
    computed.put(path, byBody);
    return this;
  }

  /** Replaces every answer at once, as a restarted engine would. */
  public FakeEngine serve(Map<String, Answer> all) {
    computed.clear();
    answers.clear();
    answers.putAll(all);
    return this;
  }

  /** Answer 401 to any request without {@code Authorization: Bearer <token>} (null: no check). */
  public FakeEngine requireBearer(String token) {
    requiredBearer = token;
    return this;
  }

  /**
   * Every Authorization header this engine was sent, in order (a router passes its client's on,
   * sgl-model-gateway v0.5.18 {@code routers/http/pd_router.rs:1358-1378}).
   */
  public List<String> authorizations() {
    return List.copyOf(authorizations);
  }

  public long hits(String path) {
    AtomicLong count = hits.get(path);
    return count == null ? 0 : count.get();
  }

  /**
   * The body of the last request to {@code path} (empty for a GET), or null before any: what
   * kvguard sent.
   */
  public byte[] lastBody(String path) {
    return lastBodies.get(path);
  }

  public long totalHits() {
    return total.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    hits.computeIfAbsent(path, p -> new AtomicLong()).incrementAndGet();
    total.incrementAndGet();
    Answer answer = answers.getOrDefault(path, Answer.status(404));
    String authorization = exchange.getRequestHeaders().getFirst("Authorization");
    if (authorization != null) {
      authorizations.add(authorization);
    }
    if (requiredBearer != null && !("Bearer " + requiredBearer).equals(authorization)) {
      answer = Answer.status(401);
    }
    try (exchange) {
      // Read the whole request first, as a real server does; an unread multi-MB body stalls the
      // client.
      byte[] body = exchange.getRequestBody().readAllBytes();
      lastBodies.put(path, body);
      if (computed.containsKey(path) && answer.status() != 401) {
        answer = computed.get(path).apply(body);
      }
      if (answer.delayMillis() > 0) {
        try {
          Thread.sleep(answer.delayMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      exchange.getResponseHeaders().set("Content-Type", answer.contentType());
      exchange.sendResponseHeaders(
          answer.status(), answer.body().length == 0 ? -1 : answer.body().length);
      if (answer.body().length > 0) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(answer.body());
        }
      }
    } catch (IOException e) {
      // The client gave up (timeouts are part of the tests); nothing to report.
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

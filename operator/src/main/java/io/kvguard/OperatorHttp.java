package io.kvguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The /metrics server, on the JDK's {@code com.sun.net.httpserver} (/healthz and /readyz: {@link
 * HealthServer}): GET-only, a few handlers, no dependency to keep up to date. It has no per-request
 * read timeout of its own; its implementation (JDK 17, {@code sun.net.httpserver.ServerImpl})
 * closes a connection whose request is not read within {@code sun.net.httpserver.maxReqTime}
 * seconds and whose answer is not taken within {@code maxRspTime}, checked every {@code
 * timerMillis}. Those are JVM-wide system properties read once, when the first server is created:
 * {@link #limitRequestTimes()} sets them first thing in {@code main} (docs/reliability.md, "A
 * health server that cannot be held").
 */
final class OperatorHttp {
  /**
   * Seconds a client has to send a whole request: the kubelet and Prometheus send theirs at once.
   */
  static final String MAX_REQUEST_SECONDS = "5";

  /** Seconds a client has to take a whole answer. */
  static final String MAX_RESPONSE_SECONDS = "10";

  /** Requests handled at once per server; a slow client holds one at most MAX_REQUEST_SECONDS. */
  static final int MAX_THREADS = 16;

  private OperatorHttp() {}

  /**
   * Sets the JDK server's request and response time limits unless the JVM was started with its own
   * ({@code -Dsun.net.httpserver.maxReqTime=...}). Must run before the first {@link HttpServer} of
   * the JVM.
   */
  static void limitRequestTimes() {
    System.getProperties().putIfAbsent("sun.net.httpserver.maxReqTime", MAX_REQUEST_SECONDS);
    System.getProperties().putIfAbsent("sun.net.httpserver.maxRspTime", MAX_RESPONSE_SECONDS);
  }

  /**
   * A server whose handlers run on up to {@link #MAX_THREADS} threads, none kept while idle. A
   * request arriving when all are busy is not queued behind them: the JDK server closes its
   * connection, and the client retries.
   */
  static HttpServer create(InetSocketAddress address, String name) throws IOException {
    HttpServer server = HttpServer.create(address, 64);
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            0,
            MAX_THREADS,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            runnable -> {
              Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    server.setExecutor(executor);
    return server;
  }

  static void answer(HttpExchange exchange, int status, String type, String body)
      throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())
          && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }
}

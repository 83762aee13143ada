package io.kvguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** GET-only server for /metrics (Prometheus text), /healthz and /readyz. */
public final class HealthServer implements AutoCloseable {
  private final HttpServer server;

  public HealthServer(int port, Supplier<String> metrics, BooleanSupplier live, BooleanSupplier ready) throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 0);
    server.setExecutor(Executors.newFixedThreadPool(2, r -> {
      Thread thread = new Thread(r, "kvguard-http");
      thread.setDaemon(true);
      return thread;
    }));
    server.createContext("/metrics", exchange -> answer(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get()));
    server.createContext("/healthz", exchange -> probe(exchange, live));
    server.createContext("/readyz", exchange -> probe(exchange, ready));
  }

  public void start() {
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void probe(HttpExchange exchange, BooleanSupplier check) throws IOException {
    boolean ok = check.getAsBoolean();
    answer(exchange, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok\n" : "not ok\n");
  }

  private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
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

  @Override
  public void close() {
    server.stop(0);
  }
}

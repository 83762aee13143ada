package io.kvguard;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.function.BooleanSupplier;

/**
 * /healthz and /readyz for the kubelet, on a port of their own (KVGUARD_HEALTH_PORT): whatever holds the metrics
 * port cannot make the kubelet restart the operator. The chart's NetworkPolicy opens no ingress to this port;
 * the kubelet's probes come from the node.
 */
public final class HealthServer implements AutoCloseable {
  private final HttpServer server;

  public HealthServer(int port, BooleanSupplier live, BooleanSupplier ready) throws IOException {
    OperatorHttp.limitRequestTimes();
    server = OperatorHttp.create(new InetSocketAddress(port), "kvguard-health");
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
    OperatorHttp.answer(exchange, ok ? 200 : 503, "text/plain; charset=utf-8", ok ? "ok\n" : "not ok\n");
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

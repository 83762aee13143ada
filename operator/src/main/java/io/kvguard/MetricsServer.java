package io.kvguard;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.function.Supplier;

/**
 * /metrics in the Prometheus text format, on KVGUARD_METRICS_PORT at KVGUARD_METRICS_BIND_ADDRESS.
 * What it reveals (namespaces, policy, role and pod names, pool sizes) is listed in docs/helm.md;
 * the chart's NetworkPolicy lets only {@code networkPolicy.metricsFrom} reach it.
 */
public final class MetricsServer implements AutoCloseable {
  private final HttpServer server;

  public MetricsServer(String bindAddress, int port, Supplier<String> metrics) throws IOException {
    OperatorHttp.limitRequestTimes();
    server =
        OperatorHttp.create(
            new InetSocketAddress(InetAddress.getByName(bindAddress), port), "kvguard-metrics");
    server.createContext(
        "/metrics",
        exchange ->
            OperatorHttp.answer(
                exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get()));
  }

  public void start() {
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}

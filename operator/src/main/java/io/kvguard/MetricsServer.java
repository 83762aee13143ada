package io.kvguard;

import io.kvguard.net.GetEndpointServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

/**
 * /metrics in the Prometheus text format, on KVGUARD_METRICS_PORT at KVGUARD_METRICS_BIND_ADDRESS.
 * What it reveals (namespaces, policy, role and pod names, pool sizes) is listed in docs/helm.md;
 * the chart's NetworkPolicy lets only {@code networkPolicy.metricsFrom} reach it. Served without
 * blocking, as health is (issue 28 §3: on the JDK's server, 24 clients holding half-sent requests
 * reset a scrape).
 */
public final class MetricsServer extends GetEndpointServer {
  static final int MAX_CONNECTIONS = 256;
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  public MetricsServer(String bindAddress, int port, Supplier<String> metrics) throws IOException {
    super(
        new InetSocketAddress(InetAddress.getByName(bindAddress), port),
        MAX_CONNECTIONS,
        "kvguard-metrics",
        Map.of(
            "/metrics",
            () -> new Answer(200, CONTENT_TYPE, metrics.get().getBytes(StandardCharsets.UTF_8))));
  }
}

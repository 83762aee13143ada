package io.kvguard;

import io.kvguard.net.GetEndpointServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * /healthz and /readyz for the kubelet, on a port of their own (KVGUARD_HEALTH_PORT): whatever
 * holds the metrics port cannot make the kubelet restart the operator. The chart's NetworkPolicy
 * opens no ingress to this port; the kubelet's probes come from the node. Served without blocking
 * (review of issue 20: with the JDK's server, 20 half-sent requests failed /healthz).
 */
public final class HealthServer extends GetEndpointServer {
  static final int MAX_CONNECTIONS = 256;

  public HealthServer(int port, BooleanSupplier live, BooleanSupplier ready) throws IOException {
    super(
        new InetSocketAddress(port),
        MAX_CONNECTIONS,
        "kvguard-health",
        Map.of("/healthz", check(live), "/readyz", check(ready)));
  }

  private static Supplier<Answer> check(BooleanSupplier check) {
    return () -> check.getAsBoolean() ? Answer.text(200, "ok\n") : Answer.text(503, "not ok\n");
  }
}

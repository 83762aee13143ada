package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §4, against the operator as the chart runs it ({@link HostileTenants}): sixteen
 * namespaces of four pods whose engines accept connections and never answer (probe timeout 60 s)
 * fill the 32 probe threads twice over; a pod in another namespace is verified within one probe
 * period plus its own probe time. Under the rule before (KVGUARD_HUNG_PROBE_LIMIT=0, what main's
 * executor does) it was still not verified 20 s after its ModelDeployment was created ({@code
 * HungProbesBenchmark} prints both in one run; {@code -Dkvguard.bench.hungProbeLimit=0} runs this
 * test so, and it fails).
 */
class HangingNamespacesIT {
  static final int PERIOD_SECONDS = 2;

  /**
   * Its own probe time and the write of its gate: unattacked, about 0.2 s from the
   * ModelDeployment's creation to the open gate here (docs/benchmarks.md).
   */
  static final Duration OWN_PROBE_AND_WRITE = Duration.ofSeconds(1);

  private HostileTenants cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void sixteenNamespacesOfEnginesThatNeverAnswerDoNotDelayAnInnocentNamespace() throws Exception {
    // -Dkvguard.bench.hungProbeLimit=0 runs it under the rule before, where it fails.
    String limit = System.getProperty("kvguard.bench.hungProbeLimit");
    cluster =
        HostileTenants.start(limit == null ? Map.of() : Map.of("KVGUARD_HUNG_PROBE_LIMIT", limit));
    List<String> hanging = cluster.hangingNamespaces(16, 4, PERIOD_SECONDS);
    // The innocent tenant arrives once every hanging namespace's probes were requested.
    await().atMost(Duration.ofSeconds(60)).until(() -> cluster.reconciled(hanging));

    cluster.innocentTenant(PERIOD_SECONDS);
    long created = System.nanoTime();
    Duration within = Duration.ofSeconds(PERIOD_SECONDS).plus(OWN_PROBE_AND_WRITE);
    try {
      await().atMost(within).pollInterval(Duration.ofMillis(50)).until(cluster::innocentVerified);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(
          "innocent pod not verified within " + within + ": " + cluster.innocentDiagnosis(), e);
    }
    System.out.printf(
        "hanging namespaces: innocent pod verified %d ms after its ModelDeployment was created%n",
        (System.nanoTime() - created) / 1_000_000);
    assertThat(cluster.openGates(hanging)).isEmpty();
    // The hanging probes are on the hung budget, not on the threads: visible to Prometheus.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(cluster.metrics()).contains("kvguard_probes_hung{"));
  }
}

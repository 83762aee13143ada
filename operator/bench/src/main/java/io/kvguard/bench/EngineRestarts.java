package io.kvguard.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.testkit.SimulatedPods;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The restart phase: engine container restarts at a fixed rate and the gate-close latency of each.
 */
final class EngineRestarts {
  private final KubernetesClient benchClient;
  private final BenchOptions options;
  private final List<String> podNames;

  EngineRestarts(KubernetesClient benchClient, BenchOptions options, List<String> podNames) {
    this.benchClient = benchClient;
    this.options = options;
    this.podNames = podNames;
  }

  /**
   * The close latencies (ms), how long the benchmark's own restart write took (GET + PATCH: what
   * the API server alone costs at this moment), and how many restarts each pod (by index) got.
   */
  record Run(double[] latencies, double[] restartRoundTrips, Map<Integer, Integer> perPod) {}

  /**
   * Restarts verified engines at the configured rate, each one only while its gate is open, and
   * times the close: from the restart written (the kubelet's report) to the watch seeing condition
   * False.
   */
  Run run(GateWatch watch) throws Exception {
    SimulatedPods pods = new SimulatedPods(benchClient);
    Map<String, Long> restartedAt = new ConcurrentHashMap<>();
    Map<String, Long> closedAt = new ConcurrentHashMap<>();
    List<Double> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
    List<Double> roundTrips = new ArrayList<>();
    watch.onChange(
        (pod, gate) -> {
          if (!gate.open() && restartedAt.containsKey(pod)) {
            closedAt.putIfAbsent(pod, System.nanoTime());
          }
        });
    Map<Integer, Integer> perPod = new ConcurrentHashMap<>();
    long interval = (long) (1e9 / options.restartsPerSecond());
    long next = System.nanoTime();
    int candidate = 0;
    for (int done = 0; done < options.restarts(); ) {
      collect(restartedAt, closedAt, latencies);
      int index = candidate;
      candidate = (candidate + 1) % options.pods();
      String name = podNames.get(index);
      GateWatch.Gate gate = watch.gate(name);
      if (ScaleBenchmark.refused(index)
          || restartedAt.containsKey(name)
          || gate == null
          || !gate.open()) {
        if (candidate == 0) {
          Waits.sleep(50);
        }
        continue;
      }
      long wait = next - System.nanoTime();
      if (wait > 0) {
        Waits.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
      next += interval;
      restartedAt.put(name, Long.MAX_VALUE);
      long before = System.nanoTime();
      pods.restartEngine(ScaleBenchmark.NAMESPACE, name);
      long written = System.nanoTime();
      roundTrips.add((written - before) / 1e6);
      restartedAt.put(name, written);
      perPod.merge(index, 1, Integer::sum);
      done++;
    }
    Waits.await(
        "restarted gates closed",
        300,
        () -> {
          collect(restartedAt, closedAt, latencies);
          return restartedAt.isEmpty();
        });
    long refusedCount = podNames.stream().filter(p -> p.endsWith("-9")).count();
    Waits.await(
        "restarted gates open again",
        600,
        () -> watch.count("True", "PoolSufficient") == options.pods() - refusedCount);
    watch.onChange((pod, gate) -> {});
    return new Run(
        latencies.stream().mapToDouble(Double::doubleValue).toArray(),
        roundTrips.stream().mapToDouble(Double::doubleValue).toArray(),
        perPod);
  }

  /**
   * Moves every restart whose close was seen into the latency list (a close seen before the write
   * returned is 0).
   */
  private static void collect(
      Map<String, Long> restartedAt, Map<String, Long> closedAt, List<Double> latencies) {
    for (Map.Entry<String, Long> closed : closedAt.entrySet()) {
      Long restarted = restartedAt.get(closed.getKey());
      if (restarted == null || restarted == Long.MAX_VALUE) {
        continue;
      }
      latencies.add(Math.max(0, closed.getValue() - restarted) / 1e6);
      restartedAt.remove(closed.getKey());
      closedAt.remove(closed.getKey());
    }
  }
}

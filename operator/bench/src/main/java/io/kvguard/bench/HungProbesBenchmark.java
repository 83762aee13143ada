package io.kvguard.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Issue 28 §4's figure, before and after, in one run on one machine: how long after its
 * ModelDeployment is created a pod in an innocent namespace is verified while sixteen namespaces of
 * four pods whose engines accept connections and never answer (probe timeout 60 s, period 2 s) hold
 * probes. "Before" is the operator with KVGUARD_HUNG_PROBE_LIMIT=0 (no hung budget: a probe holds
 * its thread until it ends, the rule of the executor before issue 28); "after" the chart's default
 * (256). Each case is a fresh operator JVM as the chart runs it ({@link HostileTenants}); the
 * innocent tenant arrives two seconds after every hanging namespace's probes were requested, and in
 * every case after a warm-up pod of its own was verified (so that the first pass's class loading is
 * not counted). A program, not a test: {@code HangingNamespacesIT} asserts.
 *
 * <pre>
 * java -Xmx1g -cp operator/bench/target/kvguard-bench.jar io.kvguard.bench.HungProbesBenchmark [--seconds 30] [--runs 3]
 * </pre>
 */
public final class HungProbesBenchmark {
  private HungProbesBenchmark() {}

  private record Case(String name, Map<String, String> env, int namespaces) {}

  public static void main(String[] args) throws Exception {
    ScaleBenchmark.quietLogs();
    int seconds = 30;
    int runs = 3;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
        case "--runs" -> runs = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    List<Case> cases =
        List.of(
            new Case("no attack", Map.of(), 0),
            new Case(
                "before: KVGUARD_HUNG_PROBE_LIMIT=0 (old rule)",
                Map.of("KVGUARD_HUNG_PROBE_LIMIT", "0"),
                16),
            new Case("after: KVGUARD_HUNG_PROBE_LIMIT=256 (default)", Map.of(), 16));
    List<String> rows = new ArrayList<>();
    for (Case c : cases) {
      List<String> figures = new ArrayList<>();
      for (int run = 0; run < runs; run++) {
        figures.add(run(c, seconds));
      }
      rows.add(
          String.format(
              "| %s | %s | %s |",
              c.name(),
              c.namespaces() == 0 ? "-" : c.namespaces() + " x 4",
              String.join(", ", figures)));
    }
    System.out.printf(
        "%ninnocent pod verified after its ModelDeployment was created (ms), %d runs each,"
            + " probe period 2 s, hanging probes' timeout 60 s, cap %d s, %d cores%n",
        runs, seconds, Runtime.getRuntime().availableProcessors());
    System.out.println("| operator | hanging namespaces x pods | innocent verified (ms) |");
    System.out.println("| --- | --- | --- |");
    rows.forEach(System.out::println);
  }

  private static String run(Case c, int seconds) throws Exception {
    System.err.println("case: " + c.name());
    try (HostileTenants cluster = HostileTenants.start(c.env())) {
      // Every case first verifies a pod of its own, so no case counts the first pass's class
      // loading.
      cluster.warmUp();
      Waits.await("warm-up pod verified", 60, cluster::warmedUp);
      if (c.namespaces() > 0) {
        List<String> hanging = cluster.hangingNamespaces(c.namespaces(), 4, 2);
        Waits.await("hanging namespaces reconciled", 60, () -> cluster.reconciled(hanging));
      }
      Waits.sleep(2000);
      cluster.innocentTenant(2);
      long created = System.nanoTime();
      while (System.nanoTime() - created < seconds * 1_000_000_000L) {
        if (cluster.innocentVerified()) {
          return String.valueOf((System.nanoTime() - created) / 1_000_000);
        }
        Waits.sleep(20);
      }
      return "not within " + seconds + " s";
    }
  }
}

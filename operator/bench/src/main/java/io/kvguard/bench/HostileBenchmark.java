package io.kvguard.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Prints the operator's memory under each attack of issue 20 ({@link HostileTenants}): a program,
 * not a test. Each attack runs for {@code --seconds} (default 30) against a fresh operator JVM with
 * the chart's JVM options and heap; every two seconds the benchmark asks that JVM for its live heap
 * (what a full GC left). Printed per attack: the largest live heap seen, the most heap the pools
 * held (garbage included), the peak resident memory, how long the innocent tenant's pod took to be
 * verified, the /healthz answers that failed, and whether the JVM was still running at the end.
 *
 * <pre>
 * java -cp operator/target/kvguard-operator.jar io.kvguard.bench.HostileBenchmark [--seconds 30]
 * </pre>
 */
public final class HostileBenchmark {
  private HostileBenchmark() {}

  private record Attack(String name, Map<String, String> env, Setup setup) {}

  @FunctionalInterface
  private interface Setup {
    void apply(HostileTenants cluster) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    ScaleBenchmark.quietLogs();
    int seconds = args.length == 2 && args[0].equals("--seconds") ? Integer.parseInt(args[1]) : 30;
    List<Attack> attacks =
        List.of(
            new Attack("none (one innocent tenant)", Map.of(), cluster -> {}),
            new Attack(
                "1. 32 pods x 3.4 MB junk page (chart defaults)",
                Map.of(),
                cluster -> cluster.junkPages(32, 3_400_000)),
            new Attack(
                "1'. the same, 4 MiB cap and 32 probes of one namespace at once",
                Map.of(
                    "KVGUARD_PROBE_MAX_BODY_BYTES",
                    "4194304",
                    "KVGUARD_PROBE_CONCURRENCY_PER_NAMESPACE",
                    "32"),
                cluster -> cluster.junkPages(32, 3_400_000)),
            new Attack(
                "2. engine claiming 30,000,000 tokens, rejection probe on",
                Map.of(),
                HostileTenants::hugeClaim),
            new Attack(
                "3. never-answering pod selected by 40 policies",
                Map.of(),
                cluster -> cluster.neverAnswering(40)),
            new Attack(
                "4. two half-sent requests to the health port",
                Map.of(),
                cluster -> cluster.halfSendToHealthPort(2)));
    List<String> rows = new ArrayList<>();
    for (Attack attack : attacks) {
      rows.add(run(attack, seconds));
    }
    System.out.printf(
        "%nheap under attack: operator JVM %s -Xmx%s, %d s per attack%n",
        BenchOptions.CHART_JVM_OPTIONS, BenchOptions.CHART_HEAP, seconds);
    System.out.println(
        "| attack | live heap max (MiB) | heap peak (MiB) | resident peak (MiB) | innocent verified (ms) "
            + "| /healthz failed | operator up |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- |");
    rows.forEach(System.out::println);
  }

  /**
   * The live heap, or NaN once the JVM is gone: a JVM ending on OutOfMemoryError prints
   * "Terminating due to java.lang.OutOfMemoryError" where the answer was expected.
   */
  private static double liveHeap(OperatorJvm operator) {
    try {
      return operator.liveHeapMiB();
    } catch (RuntimeException | java.io.IOException e) {
      System.err.println("operator JVM: " + e.getMessage());
      return Double.NaN;
    }
  }

  private static String run(Attack attack, int seconds) throws Exception {
    System.err.println("attack: " + attack.name());
    try (HostileTenants cluster = HostileTenants.start(attack.env())) {
      OperatorJvm operator = cluster.operator();
      double baseline = operator.liveHeapMiB();
      operator.resetHeapPeak();
      attack.setup().apply(cluster);
      long started = System.nanoTime();
      // The attack gets a head start before the innocent tenant arrives, as in HostileTenantsIT.
      Waits.sleep(2000);
      cluster.innocentTenant();
      long innocentAt = System.nanoTime();
      long verifiedMillis = -1;
      int healthFailures = 0;
      double liveMax = baseline;
      long nextHeap = 0;
      while (System.nanoTime() - started < seconds * 1_000_000_000L && operator.alive()) {
        if (verifiedMillis < 0 && cluster.innocentVerified()) {
          verifiedMillis = (System.nanoTime() - innocentAt) / 1_000_000;
        }
        if (!cluster.healthz()) {
          healthFailures++;
        }
        if (System.nanoTime() > nextHeap) {
          double live = liveHeap(operator);
          liveMax = Double.isNaN(live) ? liveMax : Math.max(liveMax, live);
          nextHeap = System.nanoTime() + 2_000_000_000L;
        }
        Waits.sleep(200);
      }
      Waits.sleep(500);
      boolean up = operator.alive();
      String peak = up ? String.format("%.1f", operator.heapPeakMiB()) : "-";
      String resident = up ? String.format("%.0f", operator.residentMiB()[1]) : "-";
      return String.format(
          "| %s | %.1f | %s | %s | %s | %d | %s |",
          attack.name(),
          liveMax,
          peak,
          resident,
          verifiedMillis < 0 ? "not within " + seconds + " s" : String.valueOf(verifiedMillis),
          healthFailures,
          up ? "yes" : "no (exit " + operator.exitCode() + ")");
    }
  }
}

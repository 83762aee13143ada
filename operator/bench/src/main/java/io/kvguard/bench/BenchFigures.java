package io.kvguard.bench;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What one run measured. The counts (writes, probes) do not depend on the machine; the times and
 * the memory do, and are printed beside issue 7's targets, never asserted.
 *
 * @param floorMillis the floor loop: first request to every floor pod showing its gate condition
 * @param contractFloorMillis the same loop writing the routing label after each condition, as
 *     kvguard must
 * @param startupMillis operator start to every pod's gate set (verified pods True, refused pods
 *     PoolTooSmall)
 * @param firstProbes each subject's start to its first probe (the rest of its time is the work
 *     itself)
 * @param startupRejected operator writes refused with 409/422 during start-up
 * @param closeLatenciesMillis per restart: engine container restart written to condition False seen
 *     by a watch
 * @param restartRoundTripsMillis per restart: the benchmark's own GET + PATCH of the pod (API
 *     server latency)
 * @param restartFlips gate flips (open to closed and back) the watch saw during the restart phase
 * @param steadySeconds length of the steady window actually observed
 * @param steadyShortestProbeGapMillis the shortest time between two probes of one engine in the
 *     steady window
 * @param steadyProbesPerPeriodMax the highest probes-per-period of any pod in the steady window
 * @param steadyProbeOverruns pods probed more than once per period (+1 for the window edge) in the
 *     steady window
 * @param restartProbeOverruns pods probed more than once per period + once per container start in
 *     the restart phase
 * @param rejectedPodStatus 409/422 answers to pods/status writes in the restart phase (re-read and
 *     retried)
 * @param rejectedPodLabel the same for label writes
 * @param rejectedCrStatus 422 answers to ModelDeployment status patches in the restart phase
 * @param failedReconciles reconciles JOSDK counted as failed in the restart phase
 * @param startupReconcilesPerModelDeployment reconciles per ModelDeployment from operator start to
 *     quiet after start-up
 * @param steadyReconcilesPerModelDeploymentPeriod reconciles per ModelDeployment per probe period,
 *     steady window
 * @param heapBaselineMiB the operator JVM's heap after full GC before the operator started (the JVM
 *     alone)
 * @param heapFinalMiB the operator JVM's heap after full GC at the end of the run
 * @param residentMiB the operator JVM's resident memory at the end and at its peak (what a memory
 *     limit sees)
 * @param cpuSeconds the operator JVM's CPU per phase: startup, restarts, steady
 * @param serverCpuSeconds the benchmark JVM's CPU (API server, engines, watches) in the same phases
 * @param threadCpu the operator JVM's CPU seconds by thread group over the whole run (threads alive
 *     at the end)
 * @param serverThreadCpu the same for the benchmark JVM
 */
public record BenchFigures(
    BenchOptions options,
    long floorMillis,
    long contractFloorMillis,
    long startupMillis,
    ScaleBenchmark.FirstProbes firstProbes,
    Map<ApiWrites.Kind, Long> startupWrites,
    ScaleBenchmark.Rejected startupRejected,
    double[] closeLatenciesMillis,
    double[] restartRoundTripsMillis,
    long restartFlips,
    Map<ApiWrites.Kind, Long> restartWrites,
    long rejectedPodStatus,
    long rejectedPodLabel,
    long rejectedCrStatus,
    long failedReconciles,
    double steadySeconds,
    Map<ApiWrites.Kind, Long> steadyWrites,
    double startupReconcilesPerModelDeployment,
    double steadyReconcilesPerModelDeploymentPeriod,
    double steadyShortestProbeGapMillis,
    double steadyProbesPerPeriodMax,
    double steadyProbesPerPeriodMean,
    int steadyProbeOverruns,
    int restartProbeOverruns,
    double heapBaselineMiB,
    double heapFinalMiB,
    double[] residentMiB,
    double[] cpuSeconds,
    double[] serverCpuSeconds,
    List<Map.Entry<String, Double>> threadCpu,
    List<Map.Entry<String, Double>> serverThreadCpu) {

  public double ratio() {
    return floorMillis == 0 ? Double.NaN : (double) startupMillis / floorMillis;
  }

  /**
   * The operator JVM's whole heap after full GC at the end: the operator's own, JVM baseline
   * included.
   */
  public double operatorHeapMiB() {
    return heapFinalMiB;
  }

  public double closePercentile(double p) {
    return percentile(closeLatenciesMillis, p);
  }

  static double percentile(double[] values, double p) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  public long restartWrites(ApiWrites.Kind kind) {
    return restartWrites.getOrDefault(kind, 0L);
  }

  /** Writes the API server accepted in the restart phase (attempts minus 409/422 answers). */
  public long acceptedRestartWrites(ApiWrites.Kind kind) {
    long rejected =
        switch (kind) {
          case POD_STATUS -> rejectedPodStatus;
          case POD_LABEL -> rejectedPodLabel;
          case CR_STATUS -> rejectedCrStatus;
          default -> 0;
        };
    return restartWrites(kind) - rejected;
  }

  public double perFlip(ApiWrites.Kind kind) {
    return restartFlips == 0 ? Double.NaN : (double) acceptedRestartWrites(kind) / restartFlips;
  }

  public long steadyNonLeaseWrites() {
    return ApiWrites.nonLease(steadyWrites);
  }

  public void print(PrintStream out) {
    int n = options.pods();
    out.printf(
        "%nkvguard scale benchmark: N=%d pods, %d ModelDeployments (SGLang, 1 pod in 10 refused), probe period %d s,"
            + " probeConcurrency %d, leader election on%n",
        n, n / 10, options.periodSeconds(), options.probeConcurrency());
    out.printf(
        "machine: %d cores, %s %s. The operator runs in a JVM of its own (-Xmx%s, the chart's default is 256m), as"
            + " does the floor; the API server, the fake engines and the watches share the benchmark's JVM (max heap %d MiB);"
            + " all share the cores.%n",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.name"),
        System.getProperty("java.version"),
        options.operatorHeap(),
        Runtime.getRuntime().maxMemory() >> 20);
    out.println("| figure | measured | target (issue 7) |");
    out.println("| --- | --- | --- |");
    row(out, "(1) floor: N probes + N pods/status patches", ms(floorMillis), "");
    row(out, "(1) operator start to every gate set", ms(startupMillis), "");
    row(out, "(1) operator / floor", String.format("%.2f", ratio()), "<= 1.5 at N = 1,000");
    row(
        out,
        "(1) for scale: contract floor (N probes + N condition + N label patches) / operator / floor",
        String.format(
            "%s / %.2f", ms(contractFloorMillis), (double) startupMillis / contractFloorMillis),
        "");
    row(
        out,
        "(1) for scale: start to first probe + first probe to every gate set: floor / contract floor / operator",
        split(floorMillis, firstProbes.floor())
            + " / "
            + split(contractFloorMillis, firstProbes.contractFloor())
            + " / "
            + split(startupMillis, firstProbes.operator())
            + " ms",
        "");
    row(
        out,
        "(2) gate close after restart p50 / p99 / max ("
            + closeLatenciesMillis.length
            + " restarts)",
        String.format(
            "%.0f / %.0f / %.0f ms",
            closePercentile(50), closePercentile(99), closePercentile(100)),
        "p99 < 250 ms at N = 1,000");
    row(
        out,
        "(2) for scale: the restart write itself (GET + PATCH) p50 / p99 / max",
        String.format(
            "%.0f / %.0f / %.0f ms",
            percentile(restartRoundTripsMillis, 50),
            percentile(restartRoundTripsMillis, 99),
            percentile(restartRoundTripsMillis, 100)),
        "");
    row(out, "(3) gate flips in restart phase", String.valueOf(restartFlips), "");
    for (ApiWrites.Kind kind :
        List.of(
            ApiWrites.Kind.POD_STATUS,
            ApiWrites.Kind.POD_LABEL,
            ApiWrites.Kind.CR_STATUS,
            ApiWrites.Kind.EVENT)) {
      row(
          out,
          "(3) " + kind.label + " accepted per flip (accepted / attempts)",
          String.format(
              "%.2f (%d / %d)", perFlip(kind), acceptedRestartWrites(kind), restartWrites(kind)),
          kind == ApiWrites.Kind.POD_STATUS ? "exactly 1" : "");
    }
    row(
        out,
        "(3) rejected in restart phase: pods/status, label, CR status (409/422)",
        rejectedPodStatus + ", " + rejectedPodLabel + ", " + rejectedCrStatus,
        "");
    row(
        out,
        "(3) reconciles JOSDK counted as failed in restart phase",
        String.valueOf(failedReconciles),
        "");
    row(
        out,
        String.format("(3) writes in %.0f s steady state (excl. leases)", steadySeconds),
        String.valueOf(steadyNonLeaseWrites()),
        "0");
    row(
        out,
        "(3) lease renewals in that window",
        String.valueOf(steadyWrites.getOrDefault(ApiWrites.Kind.LEASE, 0L)),
        "(leader election: one per renew period)");
    row(
        out,
        "(3) startup write attempts: pods/status, label, CR status, events",
        startupWrites.get(ApiWrites.Kind.POD_STATUS)
            + ", "
            + startupWrites.get(ApiWrites.Kind.POD_LABEL)
            + ", "
            + startupWrites.get(ApiWrites.Kind.CR_STATUS)
            + ", "
            + startupWrites.get(ApiWrites.Kind.EVENT),
        "");
    row(
        out,
        "(3) startup rejected (409/422): pods/status, label, CR status",
        startupRejected.podStatus()
            + ", "
            + startupRejected.podLabel()
            + ", "
            + startupRejected.crStatus(),
        "");
    row(
        out,
        "reconciles per ModelDeployment during start-up",
        String.format("%.1f", startupReconcilesPerModelDeployment),
        "");
    row(
        out,
        "reconciles per ModelDeployment per period, steady",
        String.format("%.1f", steadyReconcilesPerModelDeploymentPeriod),
        "");
    row(
        out,
        "(4) probes per pod per period, steady (max / mean)",
        String.format("%.2f / %.2f", steadyProbesPerPeriodMax, steadyProbesPerPeriodMean),
        "<= 1");
    row(
        out,
        "(4) shortest gap between two probes of one engine, steady",
        String.format("%.0f ms", steadyShortestProbeGapMillis),
        ">= the period less a tenth of it (at most 1 s)");
    row(
        out,
        "(4) pods over 1/period (+1/start) steady / restarts",
        steadyProbeOverruns + " / " + restartProbeOverruns,
        "0 / 0");
    row(
        out,
        "(5) operator JVM heap after full GC: before the operator started",
        String.format("%.0f MiB", heapBaselineMiB),
        "");
    row(
        out,
        "(5) operator JVM heap after full GC: at the end",
        String.format("%.0f MiB", operatorHeapMiB()),
        "< 256 MiB at N = 5,000");
    row(
        out,
        "(5) for scale: operator JVM resident memory at the end / peak (the chart's limit is 512 MiB)",
        String.format("%.0f / %.0f MiB", residentMiB[0], residentMiB[1]),
        "");
    row(
        out,
        "(5) operator JVM CPU: startup / restarts / steady",
        String.format("%.1f / %.1f / %.1f s", cpuSeconds[0], cpuSeconds[1], cpuSeconds[2]),
        "");
    row(
        out,
        "(5) for scale: benchmark JVM CPU (API server, engines, watches): startup / restarts / steady",
        String.format(
            "%.1f / %.1f / %.1f s", serverCpuSeconds[0], serverCpuSeconds[1], serverCpuSeconds[2]),
        "");
    out.println("\nOperator JVM CPU by thread group (whole run, seconds):");
    threadCpu.forEach(e -> out.printf("  %-45s %7.1f%n", e.getKey(), e.getValue()));
    out.println("Benchmark JVM CPU by thread group (whole run, seconds):");
    serverThreadCpu.forEach(e -> out.printf("  %-45s %7.1f%n", e.getKey(), e.getValue()));
  }

  private static void row(PrintStream out, String figure, String measured, String target) {
    out.println("| " + figure + " | " + measured + " | " + target + " |");
  }

  /** "start + work" of one subject; "?" where no probe was seen. */
  private static String split(long totalMillis, long firstProbeMillis) {
    return firstProbeMillis < 0
        ? "?"
        : String.format("%,d + %,d", firstProbeMillis, totalMillis - firstProbeMillis);
  }

  private static String ms(long millis) {
    return String.format("%,d ms", millis);
  }
}

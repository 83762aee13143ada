package io.kvguard.bench;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What one run measured. The counts (writes, probes) do not depend on the machine; the times and the memory
 * do, and are printed beside issue 7's targets, never asserted.
 *
 * @param floorMillis the floor loop: first request to every floor pod showing its gate condition
 * @param startupMillis operator start to every pod's gate set (verified pods True, refused pods PoolTooSmall)
 * @param closeLatenciesMillis per restart: engine container restart written to condition False seen by a watch
 * @param restartFlips gate flips (open to closed and back) the watch saw during the restart phase
 * @param steadySeconds length of the steady window actually observed
 * @param steadyProbesPerPeriodMax the highest probes-per-period of any pod in the steady window
 * @param steadyProbeOverruns pods probed more than once per period (+1 for the window edge) in the steady window
 * @param restartProbeOverruns pods probed more than once per period + once per container start in the restart phase
 * @param gateConflicts 409/422 answers to the operator's pod writes (re-read and retried)
 * @param heapBaselineMiB JVM heap after full GC before the operator started (API server, engines, watches)
 * @param heapFinalMiB the same after the run
 * @param cpuSeconds process CPU per phase: startup, restarts, steady
 * @param threadCpu CPU seconds by thread group over the whole run (threads still alive at the end)
 */
public record BenchFigures(BenchOptions options, long floorMillis, long startupMillis,
    Map<ApiWrites.Kind, Long> startupWrites, double[] closeLatenciesMillis, long restartFlips,
    Map<ApiWrites.Kind, Long> restartWrites, double steadySeconds, Map<ApiWrites.Kind, Long> steadyWrites,
    double steadyProbesPerPeriodMax, double steadyProbesPerPeriodMean, int steadyProbeOverruns,
    int restartProbeOverruns, long gateConflicts, double heapBaselineMiB, double heapFinalMiB,
    double[] cpuSeconds, List<Map.Entry<String, Double>> threadCpu) {

  public double ratio() {
    return floorMillis == 0 ? Double.NaN : (double) startupMillis / floorMillis;
  }

  public double operatorHeapMiB() {
    return heapFinalMiB - heapBaselineMiB;
  }

  public double closePercentile(double p) {
    if (closeLatenciesMillis.length == 0) {
      return Double.NaN;
    }
    double[] sorted = closeLatenciesMillis.clone();
    Arrays.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }

  public long restartWrites(ApiWrites.Kind kind) {
    return restartWrites.getOrDefault(kind, 0L);
  }

  public double perFlip(ApiWrites.Kind kind) {
    return restartFlips == 0 ? Double.NaN : (double) restartWrites(kind) / restartFlips;
  }

  public long steadyNonLeaseWrites() {
    return ApiWrites.nonLease(steadyWrites);
  }

  public void print(PrintStream out) {
    int n = options.pods();
    out.printf("%nkvguard scale benchmark: N=%d pods, %d ModelDeployments (SGLang, 1 pod in 10 refused), probe period %d s,"
        + " probeConcurrency %d, leader election on%n", n, n / 10, options.periodSeconds(), options.probeConcurrency());
    out.printf("machine: %d cores, max heap %d MiB, %s %s. The API server, the fake engines, the watches and the operator"
        + " share this one JVM and its cores.%n", Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20, System.getProperty("java.vm.name"), System.getProperty("java.version"));
    out.println("| figure | measured | target (issue 7) |");
    out.println("| --- | --- | --- |");
    row(out, "(1) floor: N probes + N pods/status patches", ms(floorMillis), "");
    row(out, "(1) operator start to every gate set", ms(startupMillis), "");
    row(out, "(1) operator / floor", String.format("%.2f", ratio()), "<= 1.5 at N = 1,000");
    row(out, "(2) gate close after restart p50 / p99 / max (" + closeLatenciesMillis.length + " restarts)",
        String.format("%.0f / %.0f / %.0f ms", closePercentile(50), closePercentile(99), closePercentile(100)),
        "p99 < 250 ms at N = 1,000");
    row(out, "(3) gate flips in restart phase", String.valueOf(restartFlips), "");
    for (ApiWrites.Kind kind : List.of(ApiWrites.Kind.POD_STATUS, ApiWrites.Kind.POD_LABEL, ApiWrites.Kind.CR_STATUS,
        ApiWrites.Kind.EVENT)) {
      row(out, "(3) " + kind.label + " per flip", String.format("%.2f (%d)", perFlip(kind), restartWrites(kind)),
          kind == ApiWrites.Kind.POD_STATUS ? "exactly 1" : "");
    }
    row(out, "(3) 409/422 answers to pod writes (whole run)", String.valueOf(gateConflicts), "");
    row(out, String.format("(3) writes in %.0f s steady state (excl. leases)", steadySeconds),
        String.valueOf(steadyNonLeaseWrites()), "0");
    row(out, "(3) lease renewals in that window", String.valueOf(steadyWrites.getOrDefault(ApiWrites.Kind.LEASE, 0L)),
        "(leader election: one per renew period)");
    row(out, "(3) startup writes: pods/status, label, CR status, events",
        startupWrites.get(ApiWrites.Kind.POD_STATUS) + ", " + startupWrites.get(ApiWrites.Kind.POD_LABEL) + ", "
            + startupWrites.get(ApiWrites.Kind.CR_STATUS) + ", " + startupWrites.get(ApiWrites.Kind.EVENT), "");
    row(out, "(4) probes per pod per period, steady (max / mean)",
        String.format("%.2f / %.2f", steadyProbesPerPeriodMax, steadyProbesPerPeriodMean), "<= 1");
    row(out, "(4) pods over 1/period (+1/start) steady / restarts", steadyProbeOverruns + " / " + restartProbeOverruns, "0 / 0");
    row(out, "(5) heap after full GC: whole JVM before / after operator",
        String.format("%.0f / %.0f MiB", heapBaselineMiB, heapFinalMiB), "");
    row(out, "(5) operator heap (difference)", String.format("%.0f MiB", operatorHeapMiB()), "< 256 MiB at N = 5,000");
    row(out, "(5) process CPU: startup / restarts / steady",
        String.format("%.1f / %.1f / %.1f s", cpuSeconds[0], cpuSeconds[1], cpuSeconds[2]), "");
    out.println("\nCPU by thread group (whole run, seconds):");
    threadCpu.forEach(e -> out.printf("  %-45s %7.1f%n", e.getKey(), e.getValue()));
  }

  private static void row(PrintStream out, String figure, String measured, String target) {
    out.println("| " + figure + " | " + measured + " | " + target + " |");
  }

  private static String ms(long millis) {
    return String.format("%,d ms", millis);
  }
}

package io.kvguard.reconciler;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the probe pool itself costs while a start's probes go through it (issue 28 §5): the
 * operator's 32 probe threads, its hung budget and lending as the reconciler builds them, a
 * thousand probes submitted by passes in bursts, each waiting on its engine for a while and parsing
 * briefly. Prints, per round, the wall time, the process's CPU and its threads' context switches
 * (Linux, {@code /proc/self/task/}{@code *}{@code /status}).
 *
 * <p>In this package because the pool is the reconciler's own; run from the benchmark's jar: {@code
 * java -cp operator/bench/target/kvguard-bench.jar io.kvguard.reconciler.ProbePoolWakeups}.
 */
public final class ProbePoolWakeups {
  private ProbePoolWakeups() {}

  public static void main(String[] args) throws Exception {
    int probes = 1000;
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
    int pauseMillis = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    System.out.println("| round | wall (ms) | process CPU (ms) | context switches |");
    System.out.println("| --- | --- | --- | --- |");
    for (int round = 1; round <= rounds; round++) {
      // The chart's defaults (KVGUARD_PROBE_CONCURRENCY 32, 4 per namespace), built as ProbeBook
      // builds the pool.
      ProbeLimits limits = new ProbeLimits(32, 4, 4);
      TenantFairExecutor pool =
          new TenantFairExecutor(
              "kvguard-probe",
              limits.concurrency(),
              Math.min(limits.concurrency(), limits.concurrencyPerNamespace()),
              limits.hung(),
              (namespace, hung) -> {},
              true);
      // A benchmark's pause, not a wait for a condition: the 32 threads start and park first, so
      // their start is not counted as the pool's cost.
      Thread.sleep(300);
      long cpu = os.getProcessCpuTime();
      long switches = contextSwitches();
      long start = System.nanoTime();
      CountDownLatch done = new CountDownLatch(probes);
      for (int i = 0; i < probes; i++) {
        pool.submit("namespace-" + (i % 10), () -> probe(done));
        if (i % 10 == 9) {
          // Passes submit a policy's pods at a time; a start's thousand probes come over seconds.
          Thread.sleep(pauseMillis);
        }
      }
      if (!done.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("probes did not finish");
      }
      System.out.printf(
          "| %d | %d | %d | %d |%n",
          round,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
          TimeUnit.NANOSECONDS.toMillis(os.getProcessCpuTime() - cpu),
          contextSwitches() - switches);
      pool.close();
      pool.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** An engine that answers in 2 ms, and 20 µs of parsing. */
  private static void probe(CountDownLatch done) {
    try {
      Thread.sleep(Duration.ofMillis(2).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long end = System.nanoTime() + 20_000;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
    done.countDown();
  }

  private static long contextSwitches() throws java.io.IOException {
    long sum = 0;
    try (var tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          for (String line : Files.readAllLines(task.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches")
                || line.startsWith("nonvoluntary_ctxt_switches")) {
              sum += Long.parseLong(line.split("\\s+")[1]);
            }
          }
        } catch (java.nio.file.NoSuchFileException gone) {
          // a thread that ended meanwhile
        }
      }
    }
    return sum;
  }
}

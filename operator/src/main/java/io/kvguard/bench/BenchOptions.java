package io.kvguard.bench;

/**
 * What one benchmark run does.
 *
 * @param pods engine pods (N); ModelDeployments = N/10, one pod in ten has a pool too small for the window
 * @param periodSeconds probe.periodSeconds of every ModelDeployment
 * @param steadySeconds the quiet window in which writes and probes are counted (issue 7: 5 minutes)
 * @param restarts engine container restarts whose gate-close latency is measured
 * @param restartsPerSecond how fast restarts are issued (each to a pod whose gate is open)
 * @param probeConcurrency KvguardConfig.probeConcurrency, used by the operator and the floor alike
 * @param operatorHeap -Xmx of the operator's (and the floor's) JVM; the default is what the Helm chart gives
 *     the operator: 75 % (jvmOptions MaxRAMPercentage) of its 512Mi memory limit. The child JVMs also get the
 *     chart's {@link #CHART_JVM_OPTIONS}; -Xmx takes precedence over its MaxRAMPercentage.
 */
public record BenchOptions(int pods, int periodSeconds, int steadySeconds, int restarts, double restartsPerSecond,
    int probeConcurrency, String operatorHeap) {

  public static final int DEFAULT_PROBE_CONCURRENCY = 32;
  public static final String CHART_HEAP = "384m";
  /** The Helm chart's default {@code jvmOptions} (a test keeps the two equal). */
  public static final String CHART_JVM_OPTIONS = "-XX:+ExitOnOutOfMemoryError -XX:MaxRAMPercentage=75 -XX:TieredStopAtLevel=1";

  public BenchOptions {
    if (pods < 10 || pods % 10 != 0) {
      throw new IllegalArgumentException("--pods must be a positive multiple of 10, was " + pods);
    }
    if (!operatorHeap.matches("\\d+[kmg]")) {
      throw new IllegalArgumentException("--operator-heap takes a -Xmx size such as 384m, was " + operatorHeap);
    }
    if (periodSeconds < 1 || steadySeconds < periodSeconds || restarts < 0 || restartsPerSecond <= 0 || probeConcurrency < 1) {
      throw new IllegalArgumentException("need --period >= 1, --steady >= --period, --restarts >= 0, --restart-rate > 0");
    }
  }

  public static BenchOptions defaults(int pods) {
    return new BenchOptions(pods, 10, 300, 200, 10, DEFAULT_PROBE_CONCURRENCY, CHART_HEAP);
  }

  /** {@code --pods N --period S --steady S --restarts R --restart-rate R/s --probe-concurrency C --operator-heap 384m}. */
  public static BenchOptions parse(String[] args) {
    int pods = 1000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (args[i].equals("--pods")) {
        pods = Integer.parseInt(args[i + 1]);
      }
    }
    BenchOptions o = defaults(pods);
    int period = o.periodSeconds;
    int steady = o.steadySeconds;
    int restarts = o.restarts;
    double rate = o.restartsPerSecond;
    int concurrency = o.probeConcurrency;
    String heap = o.operatorHeap;
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + args[i] + " needs a value");
      }
      String value = args[i + 1];
      switch (args[i]) {
        case "--pods" -> { }
        case "--period" -> period = Integer.parseInt(value);
        case "--steady" -> steady = Integer.parseInt(value);
        case "--restarts" -> restarts = Integer.parseInt(value);
        case "--restart-rate" -> rate = Double.parseDouble(value);
        case "--probe-concurrency" -> concurrency = Integer.parseInt(value);
        case "--operator-heap" -> heap = value;
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; options: --pods --period --steady --restarts --restart-rate --probe-concurrency --operator-heap");
      }
    }
    return new BenchOptions(pods, period, steady, restarts, rate, concurrency, heap);
  }
}

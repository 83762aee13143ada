package io.kvguard.bench;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one benchmark run does.
 *
 * @param pods engine pods (N); ModelDeployments = N/10, one pod in ten has a pool too small for the
 *     window
 * @param periodSeconds probe.periodSeconds of every ModelDeployment
 * @param steadySeconds the quiet window in which writes and probes are counted (issue 7: 5 minutes)
 * @param restarts engine container restarts whose gate-close latency is measured
 * @param restartsPerSecond how fast restarts are issued (each to a pod whose gate is open)
 * @param probeConcurrency KvguardConfig.probeConcurrency, used by the operator and the floor alike
 * @param operatorHeap -Xmx of the operator's (and the floor's) JVM; the default is what the Helm
 *     chart gives the operator: 50 % (jvmOptions MaxRAMPercentage) of its 512Mi memory limit. The
 *     child JVMs also get the chart's {@link #CHART_JVM_OPTIONS}; -Xmx takes precedence over its
 *     MaxRAMPercentage.
 * @param timelineMillis bucket of the start-up timeline (operator requests and probes per bucket);
 *     0 prints none
 */
public record BenchOptions(
    int pods,
    int periodSeconds,
    int steadySeconds,
    int restarts,
    double restartsPerSecond,
    int probeConcurrency,
    String operatorHeap,
    int timelineMillis) {

  public static final int DEFAULT_PROBE_CONCURRENCY = 32;
  public static final String CHART_HEAP = "256m";

  /** {@code --timeline} without {@code --timeline-ms}: half a second per line. */
  public static final int DEFAULT_TIMELINE_MILLIS = 500;

  private static final List<String> VALUED =
      List.of(
          "--pods",
          "--period",
          "--steady",
          "--restarts",
          "--restart-rate",
          "--probe-concurrency",
          "--operator-heap",
          "--timeline-ms");

  /** The Helm chart's default {@code jvmOptions} (a test keeps the two equal). */
  public static final String CHART_JVM_OPTIONS =
      "-XX:+ExitOnOutOfMemoryError -XX:MaxRAMPercentage=50 -XX:TieredStopAtLevel=1";

  public BenchOptions {
    if (pods < 10 || pods % 10 != 0) {
      throw new IllegalArgumentException("--pods must be a positive multiple of 10, was " + pods);
    }
    if (!operatorHeap.matches("\\d+[kmg]")) {
      throw new IllegalArgumentException(
          "--operator-heap takes a -Xmx size such as 384m, was " + operatorHeap);
    }
    if (timelineMillis < 0) {
      throw new IllegalArgumentException(
          "timelineMillis must be >= 0 (0: no timeline), was " + timelineMillis);
    }
    if (periodSeconds < 1
        || steadySeconds < periodSeconds
        || restarts < 0
        || restartsPerSecond <= 0
        || probeConcurrency < 1) {
      throw new IllegalArgumentException(
          "need --period >= 1, --steady >= --period, --restarts >= 0, --restart-rate > 0");
    }
  }

  public static BenchOptions defaults(int pods) {
    return new BenchOptions(pods, 10, 300, 200, 10, DEFAULT_PROBE_CONCURRENCY, CHART_HEAP, 0);
  }

  /** Whether the start-up timeline is printed. */
  public boolean timeline() {
    return timelineMillis > 0;
  }

  /**
   * The timeline's bucket. ApiWrites reports to a timeline even when it is off; it then records
   * nothing.
   */
  long timelineBucketMillis() {
    return timeline() ? timelineMillis : DEFAULT_TIMELINE_MILLIS;
  }

  /**
   * {@code --pods N --period S --steady S --restarts R --restart-rate R/s --probe-concurrency C
   * --operator-heap 384m --timeline --timeline-ms M} ({@code --timeline-ms} alone also turns the
   * timeline on).
   */
  public static BenchOptions parse(String[] args) {
    Map<String, String> values = new HashMap<>();
    boolean timeline = false;
    for (int i = 0; i < args.length; i++) {
      String option = args[i];
      if (option.equals("--timeline")) {
        timeline = true;
      } else if (VALUED.contains(option)) {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("option " + option + " needs a value");
        }
        values.put(option, args[++i]);
      } else {
        throw new IllegalArgumentException(
            "unknown option " + option + "; options: " + String.join(" ", VALUED) + " --timeline");
      }
    }
    int timelineMillis = timeline ? DEFAULT_TIMELINE_MILLIS : 0;
    if (values.containsKey("--timeline-ms")) {
      timelineMillis = Integer.parseInt(values.get("--timeline-ms"));
      if (timelineMillis < 1) {
        throw new IllegalArgumentException("--timeline-ms must be positive, was " + timelineMillis);
      }
    }
    BenchOptions o = defaults(Integer.parseInt(values.getOrDefault("--pods", "1000")));
    return new BenchOptions(
        o.pods,
        Integer.parseInt(values.getOrDefault("--period", String.valueOf(o.periodSeconds))),
        Integer.parseInt(values.getOrDefault("--steady", String.valueOf(o.steadySeconds))),
        Integer.parseInt(values.getOrDefault("--restarts", String.valueOf(o.restarts))),
        Double.parseDouble(
            values.getOrDefault("--restart-rate", String.valueOf(o.restartsPerSecond))),
        Integer.parseInt(
            values.getOrDefault("--probe-concurrency", String.valueOf(o.probeConcurrency))),
        values.getOrDefault("--operator-heap", o.operatorHeap),
        timelineMillis);
  }
}

package io.kvguard.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What the operator sent the API server, and what the engines were asked, in each bucket of
 * start-up ({@code --timeline}: half a second, or {@code --timeline-ms}). It shows where start-up
 * goes: informers and leader election, finalizers, probes, and whether gate writes keep up with
 * probe answers or queue behind them.
 */
final class StartupTimeline {
  static final String PROBE = "engine /server_info";

  private record Mark(long nanos, String what) {}

  private final long bucketMillis;
  private final ConcurrentLinkedQueue<Mark> marks = new ConcurrentLinkedQueue<>();
  private volatile long startNanos;
  private volatile boolean recording;

  StartupTimeline(long bucketMillis) {
    this.bucketMillis = bucketMillis;
  }

  void start() {
    marks.clear();
    startNanos = System.nanoTime();
    recording = true;
  }

  void stop() {
    recording = false;
  }

  /**
   * An operator request ({@link ApiWrites#classify} names writes; reads are "GET"/"LIST"/"WATCH").
   */
  void apiRequest(String method, String path) {
    if (!recording) {
      return;
    }
    ApiWrites.Kind kind = ApiWrites.classify(method, path);
    String what;
    if (kind == ApiWrites.Kind.OTHER && path != null && path.contains("/modeldeployments/")) {
      what = "ModelDeployment PATCH (finalizer)";
    } else if (kind != null) {
      what = kind.label;
    } else {
      what =
          (method.equals("GET") && path != null && path.contains("watch=true") ? "WATCH" : method)
              + resourceOf(path);
    }
    marks.add(new Mark(System.nanoTime(), what));
  }

  /** The resource a read names, so that the start's LISTs and WATCHes can be told apart. */
  private static String resourceOf(String path) {
    if (path == null) {
      return "";
    }
    String collection = path.split("\\?", 2)[0];
    for (String resource : READ_RESOURCES) {
      if (collection.contains("/" + resource)) {
        return " " + resource;
      }
    }
    return "";
  }

  private static final List<String> READ_RESOURCES =
      List.of("modeldeployments", "pods", "leases", "selfsubjectrulesreviews", "secrets", "events");

  void probe() {
    if (recording) {
      marks.add(new Mark(System.nanoTime(), PROBE));
    }
  }

  void print(PrintStream out) {
    Map<Long, Map<String, Integer>> buckets = new TreeMap<>();
    for (Mark mark : marks) {
      long bucket =
          Math.max(0, (mark.nanos() - startNanos) / 1_000_000 / bucketMillis) * bucketMillis;
      buckets.computeIfAbsent(bucket, b -> new TreeMap<>()).merge(mark.what(), 1, Integer::sum);
    }
    out.println(
        "\nStart-up timeline (from the operator's start; per "
            + bucketMillis
            + " ms: operator requests and engine probes):");
    buckets.forEach(
        (bucket, counts) -> {
          StringBuilder line = new StringBuilder(String.format("  %6d ms ", bucket));
          counts.forEach(
              (what, count) -> line.append(" ").append(what).append(" ").append(count).append(";"));
          out.println(line);
        });
  }
}

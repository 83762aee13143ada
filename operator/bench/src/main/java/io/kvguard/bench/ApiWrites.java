package io.kvguard.bench;

import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the writes the operator makes at the API server, by kind. Installed as the embedded
 * server's request hook (it never answers, only looks), so every request is seen as the server
 * receives it. The benchmark's own client sends {@link #BENCH_AGENT} and is not counted.
 */
final class ApiWrites {
  static final String BENCH_AGENT = "kvguard-bench";

  enum Kind {
    POD_STATUS("pods/status PATCH"),
    POD_LABEL("pod PATCH (label)"),
    CR_STATUS("ModelDeployment status"),
    EVENT("events POST"),
    LEASE("lease writes"),
    SECRET("verdict key Secret"),
    OTHER("other writes");

    final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  private final Map<Kind, AtomicLong> counts = new EnumMap<>(Kind.class);
  private final StartupTimeline timeline;

  ApiWrites(StartupTimeline timeline) {
    this.timeline = timeline;
    for (Kind kind : Kind.values()) {
      counts.put(kind, new AtomicLong());
    }
  }

  /** The hook: classify and let the request through (null). */
  io.fabric8.mockwebserver.http.MockResponse observe(RecordedRequest request) {
    String agent = request.getHeader("User-Agent");
    if (agent != null && agent.startsWith(BENCH_AGENT)) {
      return null;
    }
    timeline.apiRequest(request.getMethod(), request.getPath());
    Kind kind = classify(request.getMethod(), request.getPath());
    if (kind != null) {
      counts.get(kind).incrementAndGet();
    }
    return null;
  }

  static Kind classify(String method, String fullPath) {
    if (method.equals("GET") || method.equals("HEAD")) {
      return null;
    }
    String path = fullPath == null ? "" : fullPath.split("\\?", 2)[0];
    if (path.contains("/leases")) {
      return Kind.LEASE;
    }
    if (path.contains("/events")) {
      return Kind.EVENT;
    }
    if (path.contains("/secrets")) {
      // The only Secret kvguard writes: its verdict key, created once by the first replica to
      // start.
      return Kind.SECRET;
    }
    if (path.contains("/pods/")) {
      return path.endsWith("/status") ? Kind.POD_STATUS : Kind.POD_LABEL;
    }
    if (path.contains("/modeldeployments/") && path.endsWith("/status")) {
      return Kind.CR_STATUS;
    }
    if (path.contains("/selfsubjectrulesreviews")) {
      return null;
    }
    return Kind.OTHER;
  }

  /** Counts since the last reset. */
  Map<Kind, Long> snapshot() {
    Map<Kind, Long> copy = new EnumMap<>(Kind.class);
    counts.forEach((kind, count) -> copy.put(kind, count.get()));
    return copy;
  }

  void reset() {
    counts.values().forEach(count -> count.set(0));
  }

  /** Every write but lease renewals (which leader election makes on its own clock). */
  static long nonLease(Map<Kind, Long> counts) {
    return counts.entrySet().stream()
        .filter(e -> e.getKey() != Kind.LEASE)
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}

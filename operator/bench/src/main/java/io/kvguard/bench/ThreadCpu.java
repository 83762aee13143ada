package io.kvguard.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU seconds of the live threads, grouped by name with the numbers taken out (where the time
 * goes).
 */
final class ThreadCpu {
  private ThreadCpu() {}

  static List<Map.Entry<String, Double>> byGroup(int top) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<String, Double> groups = new HashMap<>();
    for (long id : threads.getAllThreadIds()) {
      ThreadInfo info = threads.getThreadInfo(id);
      long nanos = threads.getThreadCpuTime(id);
      if (info == null || nanos < 0) {
        continue;
      }
      groups.merge(info.getThreadName().replaceAll("\\d+", "#"), nanos / 1e9, Double::sum);
    }
    return groups.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .limit(top)
        .map(e -> Map.entry(e.getKey(), e.getValue()))
        .toList();
  }
}

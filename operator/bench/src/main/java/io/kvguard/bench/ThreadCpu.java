package io.kvguard.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU seconds of the live threads, grouped by name with the numbers taken out (where the time
 * goes).
 *
 * <p>On Linux every thread of the process is read from {@code /proc/self/task}, the JVM's own
 * included (the JIT's "C1 CompilerThre", "GC Thread", "VM Thread"), which the ThreadMXBean does not
 * list: in a cold start the JIT is a large part of the CPU. Linux truncates thread names to 15
 * characters there. Elsewhere the ThreadMXBean's Java threads are read.
 */
final class ThreadCpu {
  private static final Path TASKS = Path.of("/proc/self/task");
  // USER_HZ, the unit of utime and stime in /proc/<pid>/task/<tid>/stat on every Linux build.
  private static final double TICKS_PER_SECOND = 100;

  private ThreadCpu() {}

  static List<Map.Entry<String, Double>> byGroup(int top) {
    Map<String, Double> groups = Files.isDirectory(TASKS) ? fromProc() : fromThreadBean();
    return groups.entrySet().stream()
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .limit(top)
        .map(e -> Map.entry(e.getKey(), e.getValue()))
        .toList();
  }

  private static Map<String, Double> fromProc() {
    Map<String, Double> groups = new HashMap<>();
    try (Stream<Path> tasks = Files.list(TASKS)) {
      tasks.forEach(
          task -> {
            try {
              String stat = Files.readString(task.resolve("stat"));
              // "tid (name) state ppid ...": the name may hold spaces and parentheses; utime and
              // stime are the 14th and 15th fields, the 12th and 13th after the name's ')'.
              int close = stat.lastIndexOf(')');
              String name = stat.substring(stat.indexOf('(') + 1, close);
              String[] after = stat.substring(close + 2).split(" ");
              double seconds =
                  (Long.parseLong(after[11]) + Long.parseLong(after[12])) / TICKS_PER_SECOND;
              groups.merge(name.replaceAll("\\d+", "#"), seconds, Double::sum);
            } catch (IOException | RuntimeException gone) {
              // The thread ended between the listing and the read: its time is gone with it.
            }
          });
    } catch (IOException e) {
      return fromThreadBean();
    }
    return groups;
  }

  private static Map<String, Double> fromThreadBean() {
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
    return groups;
  }
}

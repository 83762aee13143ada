package io.kvguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's handle on an {@link OperatorJvmMain} child process: same Java, same class path,
 * its own heap. One child runs the floor, another the operator, so neither is warmed up by the
 * other and neither shares a heap or a JIT with the mock API server.
 */
public final class OperatorJvm implements AutoCloseable {
  private final Process process;
  private final BufferedReader answers;
  private final PrintStream commands;

  private OperatorJvm(Process process) {
    this.process = process;
    this.answers =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
  }

  /**
   * Starts the child and waits until its JVM is up and its client built (not yet any operator or
   * floor work).
   */
  static OperatorJvm launch(String apiUrl, BenchOptions options) throws IOException {
    return launch(apiUrl, options.operatorHeap(), options.probeConcurrency());
  }

  /**
   * A child JVM with the chart's JVM options and heap ({@link BenchOptions#CHART_HEAP}), ready for
   * {@link #serve}: the operator as a cluster runs it.
   */
  public static OperatorJvm launchAsTheChartRunsIt(String apiUrl) throws IOException {
    return launch(apiUrl, BenchOptions.CHART_HEAP, BenchOptions.DEFAULT_PROBE_CONCURRENCY);
  }

  private static OperatorJvm launch(String apiUrl, String heap, int probeConcurrency)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // What the chart runs the operator with, and the heap its default memory limit gives.
    command.addAll(List.of(BenchOptions.CHART_JVM_OPTIONS.split(" ")));
    command.addAll(
        List.of(
            "-Xmx" + heap,
            "-cp",
            System.getProperty("java.class.path"),
            OperatorJvmMain.class.getName(),
            apiUrl,
            String.valueOf(probeConcurrency)));
    // e.g. -Dkvguard.bench.operatorJvmArgs="-XX:StartFlightRecording=filename=operator.jfr" to
    // profile the operator.
    String extra = System.getProperty("kvguard.bench.operatorJvmArgs", "").trim();
    if (!extra.isEmpty()) {
      command.addAll(1, List.of(extra.split("\\s+")));
    }
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    OperatorJvm jvm = new OperatorJvm(process);
    jvm.expect(OperatorJvmMain.READY);
    return jvm;
  }

  void startOperator() throws IOException {
    ask("start", "started");
  }

  /**
   * Starts the operator with its HTTP servers as OperatorMain does, configured by {@code
   * environment} (the chart's variables); returns the health and metrics ports.
   */
  public int[] serve(Map<String, String> environment) throws IOException {
    StringBuilder command = new StringBuilder("serve");
    environment.forEach((key, value) -> command.append(' ').append(key).append('=').append(value));
    String[] answer = ask(command.toString(), null).split(" ");
    if (!answer[0].equals("serving")) {
      throw new IllegalStateException(
          "operator JVM answered '" + String.join(" ", answer) + "' to serve");
    }
    return new int[] {Integer.parseInt(answer[1]), Integer.parseInt(answer[2])};
  }

  /** Whether the operator's process still runs (ExitOnOutOfMemoryError ends it). */
  public boolean alive() {
    return process.isAlive();
  }

  /** The process's exit code, or null while it runs. */
  public Integer exitCode() {
    return process.isAlive() ? null : process.exitValue();
  }

  /**
   * What the exited process wrote that no command asked for: the JVM's own last words (with the
   * chart's {@code -XX:+ExitOnOutOfMemoryError}, "Terminating due to java.lang.OutOfMemoryError:
   * ..." on standard output). Empty while it runs.
   */
  public String lastWords() {
    if (process.isAlive()) {
      return "";
    }
    try {
      return String.join(" / ", answers.lines().toList());
    } catch (java.io.UncheckedIOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  void runFloor(String namespace, boolean withLabel) throws IOException {
    ask((withLabel ? "contract-floor " : "floor ") + namespace, "floor done");
  }

  /** The most heap the pools held since the last {@link #resetHeapPeak()} (an upper bound), MiB. */
  public double heapPeakMiB() throws IOException {
    return Double.parseDouble(ask("heap-peak", null));
  }

  public void resetHeapPeak() throws IOException {
    ask("reset-peak", "reset");
  }

  /** Heap live at the end of a full collection, MiB (see OperatorJvmMain.liveHeapMiB). */
  public double liveHeapMiB() throws IOException {
    return Double.parseDouble(ask("live-heap", null));
  }

  public double heapAfterGcMiB() throws IOException {
    return Double.parseDouble(ask("heap", null));
  }

  /** Resident memory now and at its peak, MiB ({@code -1} without /proc). */
  public double[] residentMiB() throws IOException {
    String[] both = ask("memory", null).trim().split(" ");
    return new double[] {Double.parseDouble(both[0]), Double.parseDouble(both[1])};
  }

  double cpuSeconds() throws IOException {
    return Double.parseDouble(ask("cpu", null));
  }

  /** JOSDK's own reconcile counters (operator.sdk.reconciliations.started / .failed), summed. */
  double reconciles(String which) throws IOException {
    return Double.parseDouble(ask("reconciles " + which, null));
  }

  List<Map.Entry<String, Double>> threadCpu() throws IOException {
    commands.println("threads");
    List<Map.Entry<String, Double>> groups = new ArrayList<>();
    for (String line = readLine(); !line.equals("end"); line = readLine()) {
      String[] parts = line.split("\t");
      groups.add(Map.entry(parts[0], Double.parseDouble(parts[1])));
    }
    return groups;
  }

  private String ask(String command, String expected) throws IOException {
    commands.println(command);
    String answer = readLine();
    if (answer.startsWith("error") || (expected != null && !answer.equals(expected))) {
      throw new IllegalStateException(
          "operator JVM answered '" + answer + "' to '" + command + "'");
    }
    return answer;
  }

  /**
   * Until the child says {@code expected}, its stdout is the JVM's own (JFR, GC logs): passed on to
   * stderr.
   */
  private void expect(String expected) throws IOException {
    for (String line = readLine(); !line.equals(expected); line = readLine()) {
      System.err.println("[operator JVM] " + line);
    }
  }

  private String readLine() throws IOException {
    String line = answers.readLine();
    if (line == null) {
      throw new IllegalStateException(
          "operator JVM exited (code " + waitFor() + "); its stderr is above");
    }
    return line;
  }

  private String waitFor() {
    try {
      return process.waitFor(10, TimeUnit.SECONDS)
          ? String.valueOf(process.exitValue())
          : "still running";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unknown";
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      commands.println("stop");
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        process.destroyForcibly();
      }
    }
  }
}

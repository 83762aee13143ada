package io.kvguard.bench;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Map;

/**
 * The benchmark's subject in a JVM of its own: either the operator (as the chart runs it: leader
 * election on, JSON patches only) or the floor loop, against the benchmark's API server. Its heap
 * and CPU are then the operator's alone, not shared with the mock API server, the fake engines and
 * the benchmark's watches.
 *
 * <p>Driven line by line over stdin/stdout by {@link OperatorJvm}: {@code start} (the operator),
 * {@code serve KEY=VALUE...} (the operator and its HTTP servers as OperatorMain runs them,
 * configured by those environment variables; answers {@code serving HEALTH_PORT METRICS_PORT}),
 * {@code floor NAMESPACE} or {@code contract-floor NAMESPACE}, then {@code heap}, {@code memory},
 * {@code cpu}, {@code reconciles started|failed}, {@code threads}, {@code stop}. Each command
 * answers one line ({@code threads}: lines up to {@code end}).
 */
public final class OperatorJvmMain {
  static final String READY = "ready";

  private OperatorJvmMain() {}

  /** {@code API_URL PROBE_CONCURRENCY}. */
  public static void main(String[] args) throws Exception {
    ScaleBenchmark.quietLogs();
    String apiUrl = args[0];
    int probeConcurrency = Integer.parseInt(args[1]);
    // An explicit configuration: never a kubeconfig or service account found on the machine running
    // the benchmark.
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(apiUrl)
            .withTrustCerts(true)
            .withHttp2Disable(true)
            .withNamespace("default")
            .build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrintStream out =
        new PrintStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    // Nothing else may write to stdout: it is the protocol.
    System.setOut(System.err);
    KvguardOperator operator = null;
    io.kvguard.OperatorMain.Serving serving = null;
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println(READY);
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] command = line.trim().split(" ");
      switch (command[0]) {
        case "start" -> {
          // The JVM's environment, as OperatorMain reads it (docs/benchmarks.md sets
          // KVGUARD_POD_LIST_CONCURRENCY there), under the settings every benchmark run needs.
          Map<String, String> settings = new java.util.HashMap<>(System.getenv());
          settings.put("KVGUARD_LEADER_ELECTION", "true");
          settings.put("KVGUARD_LEADER_ELECTION_NAMESPACE", ScaleBenchmark.OPERATOR_NAMESPACE);
          settings.put("POD_NAME", "kvguard-bench-0");
          settings.put("KVGUARD_PROBE_CONCURRENCY", String.valueOf(probeConcurrency));
          KvguardConfig operatorConfig = KvguardConfig.fromEnvironment(settings);
          operator =
              KvguardOperator.create(client, operatorConfig, registry, Clock.systemUTC(), false);
          operator.start();
          out.println("started");
        }
        case "serve" -> {
          // The operator as OperatorMain runs it, HTTP servers included, configured by KEY=VALUE
          // environment.
          Map<String, String> env = new java.util.HashMap<>();
          for (int i = 1; i < command.length; i++) {
            String[] pair = command[i].split("=", 2);
            env.put(pair[0], pair[1]);
          }
          serving =
              io.kvguard.OperatorMain.serve(
                  client, KvguardConfig.fromEnvironment(env), registry, false);
          out.println("serving " + serving.health().port() + " " + serving.metrics().port());
        }
        case "floor", "contract-floor" -> {
          // The contract floor rewrites the floor's conditions (another reason, so each is a real
          // write) plus labels.
          boolean label = command[0].equals("contract-floor");
          GateDecision open =
              new GateDecision(
                  true,
                  label ? GateReason.ContextLengthSufficient : GateReason.PoolSufficient,
                  "floor");
          Floor.run(client, command[1], probeConcurrency, open, label);
          out.println("floor done");
        }
        case "heap" -> out.println(heapAfterGcMiB());
        case "heap-peak" -> out.println(heapPeakMiB());
        case "live-heap" -> out.println(liveHeapMiB());
        case "reset-peak" -> {
          ManagementFactory.getMemoryPoolMXBeans()
              .forEach(java.lang.management.MemoryPoolMXBean::resetPeakUsage);
          out.println("reset");
        }
        case "memory" -> out.println(residentMiB("VmRSS") + " " + residentMiB("VmHWM"));
        case "cpu" -> out.println(processCpuSeconds());
        case "reconciles" ->
            out.println(
                registry.find("operator.sdk.reconciliations." + command[1]).counters().stream()
                    .mapToDouble(io.micrometer.core.instrument.Counter::count)
                    .sum());
        case "threads" -> {
          ThreadCpu.byGroup(20).forEach(e -> out.println(e.getKey() + "\t" + e.getValue()));
          out.println("end");
        }
        case "stop" -> {
          if (operator != null) {
            operator.close();
          }
          if (serving != null) {
            serving.close();
          }
          client.close();
          out.println("stopped");
          System.exit(0);
        }
        default -> out.println("error unknown command " + command[0]);
      }
    }
    // The benchmark went away without saying stop.
    System.exit(1);
  }

  static double heapAfterGcMiB() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Waits.sleep(200);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
  }

  /**
   * The heap still in use at the end of a full collection (each heap pool's usage as that
   * collection left it), in MiB: what is live, even while the operator allocates fast (an attack)
   * between the collection and the reading, which {@link #heapAfterGcMiB()} would count.
   */
  static double liveHeapMiB() {
    System.gc();
    long bytes = 0;
    for (java.lang.management.MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == java.lang.management.MemoryType.HEAP
          && pool.getCollectionUsage() != null) {
        bytes += pool.getCollectionUsage().getUsed();
      }
    }
    return bytes / (1024.0 * 1024.0);
  }

  /**
   * The most heap used since the last reset: the sum of each heap pool's peak (an upper bound, as
   * the pools need not peak at once), in MiB. Garbage counts too: this is what the heap had to
   * hold, not what was live.
   */
  static double heapPeakMiB() {
    long bytes = 0;
    for (java.lang.management.MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == java.lang.management.MemoryType.HEAP && pool.getPeakUsage() != null) {
        bytes += pool.getPeakUsage().getUsed();
      }
    }
    return bytes / (1024.0 * 1024.0);
  }

  /**
   * The process's resident memory (VmRSS now, VmHWM its peak) from /proc, in MiB; -1 where there is
   * no /proc. Heap is not what the container's memory limit sees: metaspace, code, thread stacks
   * and direct buffers are too.
   */
  static double residentMiB(String field) {
    try {
      for (String line :
          java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
        if (line.startsWith(field + ":")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
        }
      }
    } catch (java.io.IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  static double processCpuSeconds() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime()
        / 1e9;
  }
}

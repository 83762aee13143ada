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
 * The benchmark's subject in a JVM of its own: either the operator (as the chart runs it: leader election on,
 * JSON patches only) or the floor loop, against the benchmark's API server. Its heap and CPU are then the
 * operator's alone, not shared with the mock API server, the fake engines and the benchmark's watches.
 *
 * <p>Driven line by line over stdin/stdout by {@link OperatorJvm}: {@code start} (the operator),
 * {@code floor NAMESPACE} or {@code contract-floor NAMESPACE}, then {@code heap}, {@code memory}, {@code cpu}, {@code reconciles started|failed}, {@code threads},
 * {@code stop}. Each command answers one line ({@code threads}: lines up to {@code end}).
 */
public final class OperatorJvmMain {
  static final String READY = "ready";

  private OperatorJvmMain() {}

  /** {@code API_URL PROBE_CONCURRENCY}. */
  public static void main(String[] args) throws Exception {
    ScaleBenchmark.quietLogs();
    String apiUrl = args[0];
    int probeConcurrency = Integer.parseInt(args[1]);
    // An explicit configuration: never a kubeconfig or service account found on the machine running the benchmark.
    Config config = new ConfigBuilder(Config.empty()).withMasterUrl(apiUrl).withTrustCerts(true).withHttp2Disable(true)
        .withNamespace("default").build();
    KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    // Nothing else may write to stdout: it is the protocol.
    System.setOut(System.err);
    KvguardOperator operator = null;
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println(READY);
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] command = line.trim().split(" ");
      switch (command[0]) {
        case "start" -> {
          KvguardConfig operatorConfig = KvguardConfig.fromEnvironment(Map.of("KVGUARD_LEADER_ELECTION", "true",
              "KVGUARD_LEADER_ELECTION_NAMESPACE", ScaleBenchmark.OPERATOR_NAMESPACE, "POD_NAME", "kvguard-bench-0",
              "KVGUARD_PROBE_CONCURRENCY", String.valueOf(probeConcurrency)));
          operator = KvguardOperator.create(client, operatorConfig, registry, Clock.systemUTC(), false);
          operator.start();
          out.println("started");
        }
        case "floor", "contract-floor" -> {
          // The contract floor rewrites the floor's conditions (another reason, so each is a real write) plus labels.
          boolean label = command[0].equals("contract-floor");
          GateDecision open = new GateDecision(true, label ? GateReason.ContextLengthSufficient : GateReason.PoolSufficient, "floor");
          Floor.run(client, command[1], probeConcurrency, open, label);
          out.println("floor done");
        }
        case "heap" -> out.println(heapAfterGcMiB());
        case "memory" -> out.println(residentMiB("VmRSS") + " " + residentMiB("VmHWM"));
        case "cpu" -> out.println(processCpuSeconds());
        case "reconciles" -> out.println(registry.find("operator.sdk.reconciliations." + command[1]).counters().stream()
            .mapToDouble(io.micrometer.core.instrument.Counter::count).sum());
        case "threads" -> {
          ThreadCpu.byGroup(10).forEach(e -> out.println(e.getKey() + "\t" + e.getValue()));
          out.println("end");
        }
        case "stop" -> {
          if (operator != null) {
            operator.close();
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
   * The process's resident memory (VmRSS now, VmHWM its peak) from /proc, in MiB; -1 where there is no /proc.
   * Heap is not what the container's memory limit sees: metaspace, code, thread stacks and direct buffers are too.
   */
  static double residentMiB(String field) {
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
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
        .getProcessCpuTime() / 1e9;
  }
}

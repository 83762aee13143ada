package io.kvguard.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.SimulatedPods;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Issue 28 §5's start-up comparison, repeated: in each round the contract floor and the operator
 * start over fresh pods (a namespace of their own, N pods, N/10 ModelDeployments for the operator),
 * each in a new JVM, in alternating order; then the medians. One ScaleBenchmark run gives one pair,
 * and on this two-core machine the contract floor alone varies by 2 s between runs, so a 15 %
 * target cannot be read from one pair.
 *
 * <p>{@code java -cp kvguard-bench.jar io.kvguard.bench.StartupRounds --pods 1000 --rounds 7} (pass
 * {@code -Dkvguard.bench.operatorJvmArgs=-XX:SharedArchiveFile=...} as for ScaleBenchmark).
 */
public final class StartupRounds implements AutoCloseable {
  private final int pods;
  private final BenchOptions options;
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final KubernetesClient client;
  private final LoopbackEngines engines;
  private final FirstProbe firstProbe = new FirstProbe();

  /**
   * One subject's start: to its first probe, and to every gate set; the CPU its own JVM spent, and
   * the CPU of this JVM (the API server, the 1,000 engines and the gate watch) meanwhile.
   */
  record Start(
      long firstProbeMillis,
      long wholeMillis,
      double cpuSeconds,
      double jitSeconds,
      double serverCpuSeconds) {}

  StartupRounds(int pods) throws Exception {
    this.pods = pods;
    this.options = BenchOptions.defaults(pods);
    client = ScaleBenchmark.benchClient(api.url());
    engines = new LoopbackEngines(ScaleBenchmark.engineShapes(pods), "/server_info");
    engines.onProbe(firstProbe::probed);
    api.applyModelDeploymentCrd(api.client());
    namespace(ScaleBenchmark.OPERATOR_NAMESPACE);
  }

  public static void main(String[] args) throws Exception {
    int pods = 1000;
    int rounds = 7;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--pods" -> pods = Integer.parseInt(args[i + 1]);
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    ScaleBenchmark.quietLogs();
    try (StartupRounds bench = new StartupRounds(pods)) {
      bench.run(rounds, System.out);
    }
  }

  /** Every round's starts, in order. */
  record Rounds(List<Start> contractFloors, List<Start> operators) {}

  Rounds run(int rounds, PrintStream out) throws Exception {
    List<Start> floors = new ArrayList<>();
    List<Start> operators = new ArrayList<>();
    out.printf(
        "N = %d, %d rounds; ms from each subject's start%n%n"
            + "| round | first | contract floor: first probe, whole | operator: first probe, whole"
            + " | first probe − contract floor's | operator ÷ contract floor"
            + " | CPU, s: contract floor (its JIT) + its API server"
            + " | operator (its JIT) + its API server |%n"
            + "| --- | --- | --- | --- | --- | --- | --- | --- |%n",
        pods, rounds);
    // The API server shares this JVM, and its JIT is cold for the operator's requests (status and
    // finalizer patches, events) as much as for the floor's: one uncounted start of each warms it
    // for both. Without it the first round's operator took twice the later rounds' time.
    contractFloor("warm-up-floor");
    settle();
    operator("warm-up-operator");
    settle();
    for (int round = 1; round <= rounds; round++) {
      boolean floorFirst = round % 2 == 1;
      Start floor = null;
      Start operator = null;
      for (int turn = 0; turn < 2; turn++) {
        if ((turn == 0) == floorFirst) {
          floor = contractFloor("floor-" + round);
        } else {
          operator = operator("inference-" + round);
        }
        settle();
      }
      floors.add(floor);
      operators.add(operator);
      out.printf(
          "| %d | %s | %,d, %,d | %,d, %,d | %+,d | %.2f | %.1f (%.1f) + %.1f | %.1f (%.1f) + %.1f"
              + " |%n",
          round,
          floorFirst ? "contract floor" : "operator",
          floor.firstProbeMillis(),
          floor.wholeMillis(),
          operator.firstProbeMillis(),
          operator.wholeMillis(),
          operator.firstProbeMillis() - floor.firstProbeMillis(),
          (double) operator.wholeMillis() / floor.wholeMillis(),
          floor.cpuSeconds(),
          floor.jitSeconds(),
          floor.serverCpuSeconds(),
          operator.cpuSeconds(),
          operator.jitSeconds(),
          operator.serverCpuSeconds());
    }
    long floorFirst = median(floors.stream().mapToLong(Start::firstProbeMillis).toArray());
    long floorWhole = median(floors.stream().mapToLong(Start::wholeMillis).toArray());
    long operatorFirst = median(operators.stream().mapToLong(Start::firstProbeMillis).toArray());
    long operatorWhole = median(operators.stream().mapToLong(Start::wholeMillis).toArray());
    out.printf(
        "| median | | %,d, %,d | %,d, %,d | %+,d | %.2f | %.1f (%.1f) + %.1f | %.1f (%.1f) + %.1f"
            + " |%n",
        floorFirst,
        floorWhole,
        operatorFirst,
        operatorWhole,
        operatorFirst - floorFirst,
        (double) operatorWhole / floorWhole,
        median(floors, Start::cpuSeconds),
        median(floors, Start::jitSeconds),
        median(floors, Start::serverCpuSeconds),
        median(operators, Start::cpuSeconds),
        median(operators, Start::jitSeconds),
        median(operators, Start::serverCpuSeconds));
    return new Rounds(floors, operators);
  }

  /** What the rounds left in the API server: ModelDeployments and pods (none, when cleaned up). */
  int leftBehind() {
    return client.resources(ModelDeployment.class).inAnyNamespace().list().getItems().size()
        + client.pods().inAnyNamespace().list().getItems().size();
  }

  private Start contractFloor(String namespace) throws Exception {
    createPods(namespace);
    try (GateWatch watch = new GateWatch(client, namespace);
        OperatorJvm jvm = OperatorJvm.launch(api.url(), options)) {
      Start done =
          timed(
              jvm,
              () -> jvm.runFloor(namespace, true),
              "contract floor gates",
              () -> watch.countLabelled("True", "ContextLengthSufficient") == pods);
      deletePods(namespace);
      return done;
    }
  }

  private Start operator(String namespace) throws Exception {
    createPods(namespace);
    for (int md = 0; md < pods / 10; md++) {
      client
          .resources(ModelDeployment.class)
          .inNamespace(namespace)
          .resource(ScaleBenchmark.modelDeployment(namespace, md, options.periodSeconds()))
          .create();
    }
    long refused = pods / 10;
    Start done;
    try (GateWatch watch = new GateWatch(client, namespace);
        OperatorJvm jvm = OperatorJvm.launch(api.url(), options)) {
      done =
          timed(
              jvm,
              jvm::startOperator,
              "every gate set",
              () ->
                  watch.countLabelled("True", "PoolSufficient") == pods - refused
                      && watch.count("False", "PoolTooSmall") == refused);
    }
    // The operator is gone (its JVM closed, the lease released): its finalizers are lifted by hand
    // so the next round's operator finds no ModelDeployment but its own round's.
    for (ModelDeployment md :
        client.resources(ModelDeployment.class).inNamespace(namespace).list().getItems()) {
      md.getMetadata().setFinalizers(List.of());
      client.resources(ModelDeployment.class).inNamespace(namespace).resource(md).update();
    }
    client.resources(ModelDeployment.class).inNamespace(namespace).delete();
    Waits.await(
        "ModelDeployments deleted",
        120,
        () ->
            client
                .resources(ModelDeployment.class)
                .inNamespace(namespace)
                .list()
                .getItems()
                .isEmpty());
    deletePods(namespace);
    return done;
  }

  /** What a subject's JVM is told to do. */
  private interface Go {
    void run() throws java.io.IOException;
  }

  /** Tells the subject to go, then waits until {@code done}: its start, timed and its CPU read. */
  private Start timed(OperatorJvm jvm, Go go, String what, java.util.function.BooleanSupplier done)
      throws java.io.IOException {
    double cpu = jvm.cpuSeconds();
    double jit = jitSeconds(jvm);
    double serverCpu = OperatorJvmMain.processCpuSeconds();
    long start = System.nanoTime();
    firstProbe.arm();
    go.run();
    Waits.await(what, 600, done);
    return new Start(
        firstProbe.millis(),
        (System.nanoTime() - start) / 1_000_000,
        jvm.cpuSeconds() - cpu,
        jitSeconds(jvm) - jit,
        OperatorJvmMain.processCpuSeconds() - serverCpu);
  }

  /**
   * CPU seconds of the subject's JIT compiler threads so far ({@link ThreadCpu}; 0 where they
   * cannot be read): in a cold JVM a large part of a start.
   */
  private static double jitSeconds(OperatorJvm jvm) throws java.io.IOException {
    return jvm.threadCpu().stream()
        .filter(group -> group.getKey().contains("CompilerThre"))
        .mapToDouble(Map.Entry::getValue)
        .sum();
  }

  private void createPods(String namespace) throws Exception {
    namespace(namespace);
    SimulatedPods simulated = new SimulatedPods(client);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < pods; i++) {
        int index = i;
        Map<String, String> labels = Map.of("app", ScaleBenchmark.modelDeploymentName(index / 10));
        done.add(
            pool.submit(
                () ->
                    simulated.createRunning(
                        namespace,
                        ScaleBenchmark.podName(index),
                        labels,
                        engines.port(index),
                        true)));
      }
      for (Future<?> future : done) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private void deletePods(String namespace) {
    client.pods().inNamespace(namespace).delete();
    Waits.await(
        "pods deleted",
        120,
        () -> client.pods().inNamespace(namespace).list().getItems().isEmpty());
  }

  private void namespace(String name) {
    ScaleBenchmark.createNamespace(client, name);
  }

  /** Between subjects: no connection, recorded request or garbage of the last one left behind. */
  private void settle() throws Exception {
    engines.closeConnections();
    ScaleBenchmark.drainRecordedRequests(api);
    System.gc();
    Waits.sleep(2_000);
  }

  private static double median(List<Start> starts, java.util.function.ToDoubleFunction<Start> of) {
    double[] sorted = starts.stream().mapToDouble(of).sorted().toArray();
    return sorted[sorted.length / 2];
  }

  static long median(long[] values) {
    long[] sorted = values.clone();
    java.util.Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  @Override
  public void close() {
    engines.close();
    client.close();
    api.close();
  }
}

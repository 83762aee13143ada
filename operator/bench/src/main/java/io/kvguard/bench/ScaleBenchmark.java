package io.kvguard.bench;

import ch.qos.logback.classic.Level;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.SimulatedPods;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.slf4j.LoggerFactory;

/**
 * The scale benchmark of issue 7. Run it from the shaded jar: {@code java -cp
 * operator/target/kvguard-operator.jar io.kvguard.bench.ScaleBenchmark --pods 1000}. Phases: floor,
 * operator start-up, steady window (writes and probes counted), engine restarts (gate-close
 * latency, writes per flip), then heap and CPU.
 */
public final class ScaleBenchmark implements AutoCloseable {
  static final String NAMESPACE = "inference";
  static final String FLOOR_NAMESPACE = "floor";
  static final String OPERATOR_NAMESPACE = "kvguard-system";
  static final long WINDOW = 1_048_576;
  static final long BIG_POOL = 2_040_000;
  static final long SMALL_POOL = 600_000;
  private static final long SETTLE_MILLIS = 2_000;

  /** Held so the level sticks: java.util.logging keeps loggers weakly. */
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  private final BenchOptions options;
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final StartupTimeline timeline;
  private final FirstProbe firstProbe = new FirstProbe();
  private final ApiWrites writes;
  private final NamespacedKubernetesClient setupClient = api.client();
  private final KubernetesClient benchClient;
  private final LoopbackEngines engines;
  private final List<String> podNames = new ArrayList<>();
  private OperatorJvm operator;

  ScaleBenchmark(BenchOptions options) throws Exception {
    this.options = options;
    timeline = new StartupTimeline(options.timelineBucketMillis());
    writes = new ApiWrites(timeline);
    api.faults(writes::observe);
    benchClient = benchClient(api.url());
    for (int i = 0; i < options.pods(); i++) {
      podNames.add(podName(i));
    }
    engines = new LoopbackEngines(engineShapes(options.pods()), "/server_info");
    engines.onProbe(
        () -> {
          timeline.probe();
          firstProbe.probed();
        });
  }

  /** The benchmark's own client: its requests are told apart from the operator's by its agent. */
  static KubernetesClient benchClient(String apiUrl) {
    return new KubernetesClientBuilder()
        .withConfig(
            new ConfigBuilder()
                .withMasterUrl(apiUrl)
                .withUserAgent(ApiWrites.BENCH_AGENT)
                .withRequestTimeout(60_000)
                .build())
        .build();
  }

  static void createNamespace(KubernetesClient client, String name) {
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  static boolean refused(int pod) {
    return pod % 10 == 9;
  }

  /** Pod {@code i}'s name: the tenth of ModelDeployment i / 10. */
  static String podName(int i) {
    return String.format("md-%04d-pod-%d", i / 10, i % 10);
  }

  /** What engine {@code i} serves: SGLang, one in ten with a pool too small for the window. */
  static List<Map<String, Answer>> engineShapes(int pods) {
    List<Map<String, Answer>> shapes = new ArrayList<>();
    Map<String, Answer> verified = EngineShapes.sglang(WINDOW, null, "0.5.22", BIG_POOL);
    Map<String, Answer> refused = EngineShapes.sglang(WINDOW, null, "0.5.22", SMALL_POOL);
    for (int i = 0; i < pods; i++) {
      shapes.add(refused(i) ? refused : verified);
    }
    return shapes;
  }

  public static void main(String[] args) throws Exception {
    BenchOptions options = BenchOptions.parse(args);
    quietLogs();
    try (ScaleBenchmark bench = new ScaleBenchmark(options)) {
      BenchFigures figures = bench.run(System.out);
      figures.print(System.out);
      if (options.timeline()) {
        bench.timeline.print(System.out);
      }
    }
    System.exit(0);
  }

  /**
   * Console logging of thousands of verdict lines (and the mock server's line per request) would
   * measure the terminal, not the operator.
   */
  static void quietLogs() {
    ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(Level.WARN);
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  BenchFigures run(java.io.PrintStream progress) throws Exception {
    int n = options.pods();
    progress.printf(
        "setting up %d pods, %d ModelDeployments, %d engines (and %d floor pods)%n",
        n, n / 10, n, n);
    setUp();

    progress.println("floor (in a JVM of its own) ...");
    long floorMillis = floor(false, "PoolSufficient");
    long floorFirstProbe = firstProbe.millis();
    engines.closeConnections();
    progress.println("contract floor: condition and label per pod (in a JVM of its own) ...");
    long contractFloorMillis = floor(true, "ContextLengthSufficient");
    long contractFloorFirstProbe = firstProbe.millis();
    engines.closeConnections();
    benchClient.pods().inNamespace(FLOOR_NAMESPACE).delete();
    Waits.await(
        "floor pods deleted",
        120,
        () -> benchClient.pods().inNamespace(FLOOR_NAMESPACE).list().getItems().isEmpty());

    try (GateWatch watch = new GateWatch(benchClient, NAMESPACE)) {
      drainRecordedRequests();
      operator = OperatorJvm.launch(api.url(), options);
      double heapBaseline = operator.heapAfterGcMiB();
      writes.reset();
      api.clearRequests();
      long refusedCount = podNames.stream().filter(p -> p.endsWith("-9")).count();
      progress.println(
          "operator start-up (in a JVM of its own, -Xmx" + options.operatorHeap() + ") ...");
      double cpu0 = operator.cpuSeconds();
      double serverCpu0 = cpuSeconds();
      long start = System.nanoTime();
      firstProbe.arm();
      if (options.timeline()) {
        timeline.start();
      }
      operator.startOperator();
      // Set means both halves: verified pods show the condition True and carry the routing label.
      Waits.await(
          "every gate set",
          1800,
          () ->
              watch.countLabelled("True", "PoolSufficient") == n - refusedCount
                  && watch.count("False", "PoolTooSmall") == refusedCount);
      long startupMillis = (System.nanoTime() - start) / 1_000_000;
      FirstProbes firstProbes =
          new FirstProbes(floorFirstProbe, contractFloorFirstProbe, firstProbe.millis());
      timeline.stop();
      progress.printf("every gate set after %,d ms (floor %,d ms)%n", startupMillis, floorMillis);
      awaitQuiet();
      Map<ApiWrites.Kind, Long> startupWrites = writes.snapshot();
      double startupReconciles = operator.reconciles("started") / (n / 10.0);
      Rejected startupRejected = rejected(api.requests());
      api.clearRequests();
      double cpuStartup = operator.cpuSeconds() - cpu0;
      double serverCpuStartup = cpuSeconds() - serverCpu0;

      progress.printf("steady window %d s ...%n", options.steadySeconds());
      writes.reset();
      long[] probesBefore = engines.probeSnapshot();
      engines.resetProbeGaps();
      double reconcilesBefore = operator.reconciles("started");
      long steadyStart = System.nanoTime();
      double cpu1 = operator.cpuSeconds();
      double serverCpu1 = cpuSeconds();
      Waits.sleep(options.steadySeconds() * 1000L);
      double steadySeconds = (System.nanoTime() - steadyStart) / 1e9;
      Map<ApiWrites.Kind, Long> steadyWrites = writes.snapshot();
      double steadyReconciles = operator.reconciles("started") - reconcilesBefore;
      long[] probesAfter = engines.probeSnapshot();
      double shortestGap = engines.shortestProbeGapMillis();
      double cpuSteady = operator.cpuSeconds() - cpu1;
      double serverCpuSteady = cpuSeconds() - serverCpu1;
      double periods = steadySeconds / options.periodSeconds();
      double max = 0;
      double sum = 0;
      int steadyOverruns = 0;
      for (int i = 0; i < n; i++) {
        long probes = probesAfter[i] - probesBefore[i];
        max = Math.max(max, probes / periods);
        sum += probes / periods;
        if (probes > Math.floor(periods) + 1) {
          steadyOverruns++;
        }
      }

      progress.printf(
          "%d engine restarts at %.0f/s ...%n", options.restarts(), options.restartsPerSecond());
      writes.reset();
      api.clearRequests();
      double failedBefore = operator.reconciles("failed");
      long flipsBefore = watch.flips();
      double cpu2 = operator.cpuSeconds();
      double serverCpu2 = cpuSeconds();
      long[] restartProbesBefore = engines.probeSnapshot();
      long restartStart = System.nanoTime();
      EngineRestarts.Run restarts = new EngineRestarts(benchClient, options, podNames).run(watch);
      awaitQuiet();
      double restartSeconds = (System.nanoTime() - restartStart) / 1e9;
      long[] restartProbesAfter = engines.probeSnapshot();
      int restartOverruns = 0;
      for (int i = 0; i < n; i++) {
        long probes = restartProbesAfter[i] - restartProbesBefore[i];
        if (probes
            > Math.floor(restartSeconds / options.periodSeconds())
                + 1
                + restarts.perPod().getOrDefault(i, 0)) {
          restartOverruns++;
        }
      }
      Map<ApiWrites.Kind, Long> restartWrites = writes.snapshot();
      long flips = watch.flips() - flipsBefore;
      double cpuRestarts = operator.cpuSeconds() - cpu2;
      double serverCpuRestarts = cpuSeconds() - serverCpu2;
      Rejected rejected = rejected(api.requests());
      double failedReconciles = operator.reconciles("failed") - failedBefore;
      api.clearRequests();
      drainRecordedRequests();
      double[] resident = operator.residentMiB();
      double heapFinal = operator.heapAfterGcMiB();
      return new BenchFigures(
          options,
          floorMillis,
          contractFloorMillis,
          startupMillis,
          firstProbes,
          startupWrites,
          startupRejected,
          restarts.latencies(),
          restarts.restartRoundTrips(),
          flips,
          restartWrites,
          rejected.podStatus(),
          rejected.podLabel(),
          rejected.crStatus(),
          (long) failedReconciles,
          steadySeconds,
          steadyWrites,
          startupReconciles,
          steadyReconciles / (n / 10.0) / periods,
          shortestGap,
          max,
          sum / n,
          steadyOverruns,
          restartOverruns,
          heapBaseline,
          heapFinal,
          resident,
          new double[] {cpuStartup, cpuRestarts, cpuSteady},
          new double[] {serverCpuStartup, serverCpuRestarts, serverCpuSteady},
          operator.threadCpu(),
          ThreadCpu.byGroup(10));
    }
  }

  /**
   * One floor run over the floor pods, in a fresh JVM: until the watch sees every condition with
   * {@code reason}.
   */
  private long floor(boolean withLabel, String reason) throws Exception {
    try (GateWatch floorWatch = new GateWatch(benchClient, FLOOR_NAMESPACE);
        OperatorJvm floorJvm = OperatorJvm.launch(api.url(), options)) {
      long start = System.nanoTime();
      firstProbe.arm();
      floorJvm.runFloor(FLOOR_NAMESPACE, withLabel);
      Waits.await(
          "floor gates",
          600,
          () ->
              (withLabel
                      ? floorWatch.countLabelled("True", reason)
                      : floorWatch.count("True", reason))
                  == options.pods());
      return (System.nanoTime() - start) / 1_000_000;
    }
  }

  /**
   * Milliseconds from each subject's start to its first probe: its own start-up, before any work.
   */
  record FirstProbes(long floor, long contractFloor, long operator) {}

  /**
   * Operator writes the API server refused (409/422) in one phase; the operator re-reads and
   * retries them. {@code histories}: for each refused pod write, that pod's requests in order.
   * {@code repeatedConditions}: the same for each pod whose pods/status the operator wrote more
   * than once (at start-up each pod's condition is due once).
   */
  record Rejected(
      long podStatus,
      long podLabel,
      long crStatus,
      List<String> histories,
      List<String> repeatedConditions) {}

  static Rejected rejected(List<EmbeddedApiServer.Request> requests) {
    long podStatus = 0;
    long podLabel = 0;
    long crStatus = 0;
    List<String> histories = new ArrayList<>();
    Map<String, List<EmbeddedApiServer.Request>> statusWrites = new java.util.TreeMap<>();
    for (EmbeddedApiServer.Request request : requests) {
      boolean operators =
          request.userAgent() == null || !request.userAgent().startsWith(ApiWrites.BENCH_AGENT);
      if (operators
          && ApiWrites.classify(request.method(), request.path()) == ApiWrites.Kind.POD_STATUS) {
        statusWrites.computeIfAbsent(podPath(request.path()), p -> new ArrayList<>()).add(request);
      }
      if (request.status() != 409 && request.status() != 422) {
        continue;
      }
      ApiWrites.Kind kind = ApiWrites.classify(request.method(), request.path());
      if (kind == ApiWrites.Kind.POD_STATUS) {
        podStatus++;
      } else if (kind == ApiWrites.Kind.POD_LABEL) {
        podLabel++;
      } else if (kind == ApiWrites.Kind.CR_STATUS) {
        crStatus++;
      }
      if (kind == ApiWrites.Kind.POD_STATUS || kind == ApiWrites.Kind.POD_LABEL) {
        histories.add(history(requests, request));
      }
    }
    List<String> repeated = new ArrayList<>();
    statusWrites.values().stream()
        .filter(writes -> writes.size() > 1)
        .forEach(writes -> repeated.add(history(requests, writes.get(1))));
    return new Rejected(podStatus, podLabel, crStatus, histories, repeated);
  }

  /**
   * Every request the server saw for the pod of {@code write} (a refused or a repeated write), in
   * order, ms from the first request: who wrote the pod between the read the write was planned on
   * and the write.
   */
  private static String history(
      List<EmbeddedApiServer.Request> requests, EmbeddedApiServer.Request write) {
    String pod = podPath(write.path());
    long t0 = requests.get(0).atNanos();
    StringBuilder out =
        new StringBuilder(
            write.method()
                + " "
                + write.path()
                + " -> "
                + write.status()
                + "; the pod's requests:");
    for (EmbeddedApiServer.Request request : requests) {
      if (pod.equals(podPath(request.path()))) {
        out.append(
            String.format(
                "%n  %,8d ms %s %s -> %d (%s)",
                (request.atNanos() - t0) / 1_000_000,
                request.method(),
                request.path(),
                request.status(),
                request.userAgent()));
      }
    }
    return out.toString();
  }

  private static String podPath(String path) {
    return path == null ? "" : path.split("\\?", 2)[0].replaceAll("/status$", "");
  }

  private void setUp() throws Exception {
    api.applyModelDeploymentCrd(setupClient);
    for (String ns : List.of(NAMESPACE, FLOOR_NAMESPACE, OPERATOR_NAMESPACE)) {
      createNamespace(benchClient, ns);
    }
    SimulatedPods pods = new SimulatedPods(benchClient);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < options.pods(); i++) {
        int index = i;
        Map<String, String> labels = Map.of("app", modelDeploymentName(index / 10));
        done.add(
            pool.submit(
                () ->
                    pods.createRunning(
                        NAMESPACE, podNames.get(index), labels, engines.port(index), true)));
        done.add(
            pool.submit(
                () ->
                    pods.createRunning(
                        FLOOR_NAMESPACE, podNames.get(index), labels, engines.port(index), true)));
      }
      for (Future<?> future : done) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }
    for (int md = 0; md < options.pods() / 10; md++) {
      benchClient
          .resources(ModelDeployment.class)
          .inNamespace(NAMESPACE)
          .resource(modelDeployment(NAMESPACE, md, options.periodSeconds()))
          .create();
    }
  }

  static String modelDeploymentName(int md) {
    return String.format("md-%04d", md);
  }

  /** The benchmark's ModelDeployment {@code index}: ten pods, SGLang, the incident's window. */
  static ModelDeployment modelDeployment(String namespace, int index, int periodSeconds) {
    RoleSpec role = new RoleSpec();
    role.setName("serve");
    role.setEngine(Engine.SGLANG);
    role.setSelector(
        new LabelSelectorBuilder()
            .withMatchLabels(Map.of("app", modelDeploymentName(index)))
            .build());
    role.setPort(new IntOrString(SimulatedPods.ENGINE_PORT_NAME));
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(periodSeconds);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(WINDOW);
    spec.setRoles(List.of(role));
    spec.setProbe(probe);
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(modelDeploymentName(index));
    md.getMetadata().setNamespace(namespace);
    md.setSpec(spec);
    return md;
  }

  /** Waits until the operator has made no write (leases aside) for SETTLE_MILLIS. */
  private void awaitQuiet() {
    long last = ApiWrites.nonLease(writes.snapshot());
    long quietSince = System.nanoTime();
    while ((System.nanoTime() - quietSince) / 1_000_000 < SETTLE_MILLIS) {
      Waits.sleep(100);
      long now = ApiWrites.nonLease(writes.snapshot());
      if (now != last) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
  }

  /**
   * The mock web server keeps every request it served (bodies included) in an unbounded queue:
   * empty it.
   */
  private void drainRecordedRequests() throws Exception {
    drainRecordedRequests(api);
  }

  static void drainRecordedRequests(EmbeddedApiServer api) throws Exception {
    java.lang.reflect.Field field = EmbeddedApiServer.class.getDeclaredField("server");
    field.setAccessible(true);
    io.fabric8.mockwebserver.DefaultMockServer server =
        (io.fabric8.mockwebserver.DefaultMockServer) field.get(api);
    while (server.takeRequest(1, java.util.concurrent.TimeUnit.MILLISECONDS) != null) {
      // drained
    }
  }

  private static double cpuSeconds() {
    return OperatorJvmMain.processCpuSeconds();
  }

  @Override
  public void close() {
    if (operator != null) {
      operator.close();
    }
    engines.close();
    benchClient.close();
    setupClient.close();
    api.close();
  }
}

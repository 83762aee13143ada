package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.SimulatedPods;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * What pods no ModelDeployment can select cost the operator (issue 18 §2). A program that prints
 * figures, not a test. Realistic pods ({@link RealisticPods}, about 27 KB of JSON each) in the
 * embedded API server: {@code --guarded} pods in {@code --guarded-namespaces} namespaces, ten per
 * ModelDeployment, each with a loopback engine it is verified on; then {@code --unrelated} pods no
 * policy selects, most in namespaces without a ModelDeployment and {@code --beside} of them (a
 * fraction) in the guarded namespaces. The operator runs in a JVM of its own with the chart's JVM
 * options and heap ({@link OperatorJvm#launchAsTheChartRunsIt}).
 *
 * <p>Phases: (1) start with the guarded pods only, every gate set; (2) unrelated pods created in
 * other namespaces; (3) unrelated pods created beside the guarded ones; (4) a fresh operator JVM
 * started with every pod already there (its LIST). After each: the live heap (what a full
 * collection left) and resident memory of the operator.
 *
 * <p>With {@code --all-at-start true} every pod, guarded and unrelated, is created before one
 * operator JVM starts, and only that JVM is measured once every gate is set. This is how a cluster
 * too large for the embedded API server to serve while it grows can still be measured: creating
 * tens of thousands of 27 KB pods while an operator runs starves the operator's requests and its
 * lease renewals, whereas the same pods created first leave the server idle when the operator
 * starts.
 */
public final class PodCacheBenchmark implements AutoCloseable {
  private static final long WINDOW = 1_048_576;
  private static final int PODS_PER_POLICY = 10;
  private static final int CREATE_THREADS = 4;

  private final int guarded;
  private final int unrelated;
  private final int guardedNamespaces;
  private final int unrelatedNamespaces;
  private final double beside;
  private final boolean allAtStart;
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final KubernetesClient client;
  private final LoopbackEngines engines;
  private final List<GateWatch> watches = new ArrayList<>();

  private PodCacheBenchmark(Map<String, String> options) throws Exception {
    guarded = Integer.parseInt(options.getOrDefault("--guarded", "5000"));
    unrelated = Integer.parseInt(options.getOrDefault("--unrelated", String.valueOf(10 * guarded)));
    guardedNamespaces = Integer.parseInt(options.getOrDefault("--guarded-namespaces", "10"));
    unrelatedNamespaces = Integer.parseInt(options.getOrDefault("--unrelated-namespaces", "50"));
    beside = Double.parseDouble(options.getOrDefault("--beside", "0.1"));
    allAtStart = Boolean.parseBoolean(options.getOrDefault("--all-at-start", "false"));
    if (guarded % (guardedNamespaces * PODS_PER_POLICY) != 0) {
      throw new IllegalArgumentException(
          "--guarded must be a multiple of 10 x --guarded-namespaces");
    }
    client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl(api.url())
                    .withUserAgent(ApiWrites.BENCH_AGENT)
                    .withRequestTimeout(300_000)
                    .build())
            .build();
    Map<String, Answer> verified = EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000);
    engines = new LoopbackEngines(Collections.nCopies(guarded, verified), "/server_info");
  }

  /**
   * {@code --guarded 5000 --unrelated 50000 --guarded-namespaces 10 --unrelated-namespaces 50
   * --beside 0.1}.
   */
  public static void main(String[] args) throws Exception {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      options.put(args[i], args[i + 1]);
    }
    ScaleBenchmark.quietLogs();
    try (PodCacheBenchmark bench = new PodCacheBenchmark(options)) {
      bench.run(System.out);
    }
    System.exit(0);
  }

  private static String guardedNamespace(int i) {
    return String.format("serving-%02d", i);
  }

  private void run(PrintStream out) throws Exception {
    int besideCount = (int) Math.round(unrelated * beside);
    int elsewhere = unrelated - besideCount;
    out.printf(
        "pod-cache benchmark: %d guarded pods in %d namespaces (%d ModelDeployments); %d unrelated pods: %d in %d"
            + " other namespaces, %d beside the guarded ones%n",
        guarded,
        guardedNamespaces,
        guarded / PODS_PER_POLICY,
        unrelated,
        elsewhere,
        unrelatedNamespaces,
        besideCount);
    api.applyModelDeploymentCrd(api.client());
    namespace(ScaleBenchmark.OPERATOR_NAMESPACE);
    long t0 = System.nanoTime();
    createGuarded();
    out.printf(
        "set up the guarded pods and policies in %d s%n", (System.nanoTime() - t0) / 1_000_000_000);
    List<String[]> rows = new ArrayList<>();
    if (allAtStart) {
      allAtStart(out, rows, elsewhere, besideCount);
    } else {
      inPhases(out, rows, elsewhere, besideCount);
    }
    out.println();
    out.println("| phase | live heap after full GC | resident (VmRSS) | resident peak (VmHWM) |");
    out.println("| --- | --- | --- | --- |");
    rows.forEach(r -> out.printf("| %s | %s | %s | %s |%n", (Object[]) r));
  }

  private void allAtStart(PrintStream out, List<String[]> rows, int elsewhere, int besideCount)
      throws Exception {
    long t0 = System.nanoTime();
    createUnrelated(elsewhere, unrelatedNamespaces, i -> String.format("batch-%02d", i), "job");
    createUnrelated(
        besideCount, guardedNamespaces, PodCacheBenchmark::guardedNamespace, "sidecar-job");
    out.printf(
        "created %d unrelated pods (%d beside the guarded ones) in %d s%n",
        elsewhere + besideCount, besideCount, (System.nanoTime() - t0) / 1_000_000_000);
    try (OperatorJvm operator = OperatorJvm.launchAsTheChartRunsIt(api.url())) {
      measured(out, rows, figures("operator JVM before start", operator, 0));
      operator.resetHeapPeak();
      long start = System.nanoTime();
      operator.startOperator();
      awaitEveryGate(operator);
      out.printf(
          "every guarded gate set %d ms after start%n", (System.nanoTime() - start) / 1_000_000);
      measured(
          out,
          rows,
          figures(
              "operator started on "
                  + guarded
                  + " guarded and "
                  + (elsewhere + besideCount)
                  + " unrelated pods, every gate set",
              operator,
              settledLive(operator)));
      measured(out, rows, heapPeak("    heap peak, garbage included", operator));
    } catch (IllegalStateException e) {
      out.println("operator JVM failed: " + e.getMessage());
    }
  }

  private void inPhases(PrintStream out, List<String[]> rows, int elsewhere, int besideCount)
      throws Exception {
    long t0;
    try (OperatorJvm operator = OperatorJvm.launchAsTheChartRunsIt(api.url())) {
      measured(out, rows, figures("operator JVM before start", operator, 0));
      long start = System.nanoTime();
      operator.startOperator();
      awaitEveryGate(operator);
      out.printf(
          "every guarded gate set %d ms after start%n", (System.nanoTime() - start) / 1_000_000);
      double guardedOnly = live(operator);
      measured(
          out,
          rows,
          figures("(1) " + guarded + " guarded pods, every gate set", operator, guardedOnly));

      t0 = System.nanoTime();
      createUnrelated(elsewhere, unrelatedNamespaces, i -> String.format("batch-%02d", i), "job");
      out.printf(
          "created %d unrelated pods in other namespaces in %d s%n",
          elsewhere, (System.nanoTime() - t0) / 1_000_000_000);
      double afterElsewhere = settledLive(operator);
      measured(
          out,
          rows,
          figures(
              "(2) + "
                  + elsewhere
                  + " unrelated pods in "
                  + unrelatedNamespaces
                  + " other namespaces",
              operator,
              afterElsewhere));
      measured(
          out,
          rows,
          new String[] {
            "    per unrelated pod elsewhere",
            perPod(afterElsewhere - guardedOnly, elsewhere),
            "",
            ""
          });

      t0 = System.nanoTime();
      createUnrelated(
          besideCount, guardedNamespaces, PodCacheBenchmark::guardedNamespace, "sidecar-job");
      out.printf(
          "created %d unrelated pods beside the guarded ones in %d s%n",
          besideCount, (System.nanoTime() - t0) / 1_000_000_000);
      double afterBeside = settledLive(operator);
      measured(
          out,
          rows,
          figures(
              "(3) + " + besideCount + " unrelated pods in the guarded namespaces",
              operator,
              afterBeside));
      measured(
          out,
          rows,
          new String[] {
            "    per unrelated pod beside guarded ones",
            perPod(afterBeside - afterElsewhere, besideCount),
            "",
            ""
          });
    } catch (IllegalStateException e) {
      out.println("operator JVM failed: " + e.getMessage());
    }

    try (OperatorJvm operator = OperatorJvm.launchAsTheChartRunsIt(api.url())) {
      operator.resetHeapPeak();
      long start = System.nanoTime();
      operator.startOperator();
      Waits.await(
          "a pass of every ModelDeployment",
          600,
          () -> reconciles(operator) >= guarded / PODS_PER_POLICY);
      awaitEveryGate(operator);
      out.printf(
          "restart: a pass of every ModelDeployment %d ms after start%n",
          (System.nanoTime() - start) / 1_000_000);
      double restarted = settledLive(operator);
      String[] row = figures("(4) fresh operator, every pod there at start", operator, restarted);
      measured(out, rows, row);
      measured(out, rows, heapPeak("    heap peak during (4), garbage included", operator));
    } catch (IllegalStateException e) {
      out.println("operator JVM (restart) failed: " + e.getMessage());
    }
  }

  /**
   * The heap pools' peaks summed since the last reset: an upper bound, each pool peaking at its own
   * moment.
   */
  private static String[] heapPeak(String label, OperatorJvm operator) throws java.io.IOException {
    return new String[] {label, String.format("%.1f MiB", operator.heapPeakMiB()), "", ""};
  }

  /**
   * Keeps a row for the table and prints it at once: a run cut short still shows the phases it
   * finished.
   */
  private static void measured(PrintStream out, List<String[]> rows, String[] row) {
    rows.add(row);
    out.printf("measured: %s%n", String.join(" | ", row));
    out.flush();
  }

  private double reconciles(OperatorJvm operator) {
    try {
      return operator.reconciles("started");
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String perPod(double mib, int pods) {
    return pods == 0 ? "-" : String.format("%.2f KiB", mib * 1024 / pods);
  }

  private static double live(OperatorJvm operator) throws java.io.IOException {
    return operator.liveHeapMiB();
  }

  /**
   * The live heap once two readings 3 s apart agree within 0.5 MiB (the watch has delivered what it
   * will).
   */
  private static double settledLive(OperatorJvm operator) throws java.io.IOException {
    double before = operator.liveHeapMiB();
    for (int i = 0; i < 40; i++) {
      Waits.sleep(3_000);
      double now = operator.liveHeapMiB();
      if (Math.abs(now - before) < 0.5) {
        return now;
      }
      before = now;
    }
    return before;
  }

  private static String[] figures(String phase, OperatorJvm operator, double liveMiB)
      throws java.io.IOException {
    double live = liveMiB > 0 ? liveMiB : operator.liveHeapMiB();
    double[] resident = operator.residentMiB();
    return new String[] {
      phase,
      String.format("%.1f MiB", live),
      String.format("%.0f MiB", resident[0]),
      String.format("%.0f MiB", resident[1])
    };
  }

  private void awaitEveryGate(OperatorJvm operator) {
    Waits.await(
        "every guarded pod verified and labelled",
        1_800,
        () -> {
          if (!operator.alive()) {
            throw new IllegalStateException(
                "the operator JVM exited (code "
                    + operator.exitCode()
                    + "): "
                    + operator.lastWords());
          }
          return watches.stream().mapToLong(w -> w.countLabelled("True", "PoolSufficient")).sum()
              >= guarded;
        });
  }

  private void namespace(String name) {
    ScaleBenchmark.createNamespace(client, name);
  }

  private void createGuarded() throws Exception {
    int perNamespace = guarded / guardedNamespaces;
    List<Pod> pods = new ArrayList<>();
    for (int n = 0; n < guardedNamespaces; n++) {
      String namespace = guardedNamespace(n);
      namespace(namespace);
      for (int p = 0; p < perNamespace; p++) {
        int index = n * perNamespace + p;
        String policy = String.format("model-%03d", p / PODS_PER_POLICY);
        pods.add(
            RealisticPods.pod(
                namespace,
                policy + "-7f9c5d-" + p % PODS_PER_POLICY,
                Map.of("app", policy, "pod-template-hash", "7f9c5d"),
                engines.port(index),
                true));
      }
    }
    create(pods);
    for (int n = 0; n < guardedNamespaces; n++) {
      String namespace = guardedNamespace(n);
      for (int m = 0; m < perNamespace / PODS_PER_POLICY; m++) {
        client
            .resources(ModelDeployment.class)
            .inNamespace(namespace)
            .resource(policy(namespace, String.format("model-%03d", m)))
            .create();
      }
      watches.add(new GateWatch(client, namespace));
    }
  }

  private void createUnrelated(
      int count, int namespaces, java.util.function.IntFunction<String> namespaceName, String app)
      throws Exception {
    for (int i = 0; i < Math.min(count, namespaces); i++) {
      String namespace = namespaceName.apply(i);
      if (!namespace.startsWith("serving-")) {
        namespace(namespace);
      }
    }
    // Each pod is built by the task that creates it: 45,000 realistic pods built up front held
    // gigabytes of the benchmark's heap beside the API server's copies.
    create(
        count,
        i ->
            RealisticPods.pod(
                namespaceName.apply(i % namespaces),
                app + "-" + i,
                Map.of("app", app + "-" + (i % 100), "pod-template-hash", "5d8b7c"),
                -1,
                false));
  }

  /**
   * Created with their status, as a kubelet would have reported it (the mock keeps what it is
   * given).
   */
  private void create(List<Pod> pods) throws Exception {
    create(pods.size(), pods::get);
  }

  private void create(int count, java.util.function.IntFunction<Pod> pod) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(CREATE_THREADS);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int index = i;
        done.add(
            pool.submit(
                () -> {
                  Pod created = pod.apply(index);
                  client
                      .pods()
                      .inNamespace(created.getMetadata().getNamespace())
                      .resource(created)
                      .create();
                }));
      }
      for (Future<?> future : done) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** An SGLang policy of one role selecting {@code app=name} on the simulated pods' engine port. */
  static ModelDeployment policy(String namespace, String name) {
    RoleSpec role = new RoleSpec();
    role.setName("serve");
    role.setEngine(Engine.SGLANG);
    role.setSelector(new LabelSelectorBuilder().withMatchLabels(Map.of("app", name)).build());
    role.setPort(new IntOrString(SimulatedPods.ENGINE_PORT_NAME));
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(WINDOW);
    spec.setRoles(List.of(role));
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(name);
    md.getMetadata().setNamespace(namespace);
    md.setSpec(spec);
    return md;
  }

  @Override
  public void close() {
    watches.forEach(GateWatch::close);
    engines.close();
    client.close();
    api.close();
  }
}

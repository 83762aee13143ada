package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.SimulatedPods;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Writes the class-data-sharing archive the operator's jar ships with (docs/benchmarks.md,
 * "Start-up"): the shipped jar, run as the image runs it ({@code java -jar}, the chart's
 * environment, leader election on), against an embedded API server with ModelDeployments over
 * running pods and fake SGLang engines on loopback, until it has probed every pod, set every gate
 * and answered a metrics scrape and a readiness probe; then it is stopped as Kubernetes stops it
 * (SIGTERM) and its JVM writes the archive at exit. Every class of a real start and of the passes
 * after it is in the archive, not only those up to the first LIST (an archive of those alone left
 * the start 2.8–3.7 s behind the contract floor's).
 *
 * <p>{@code ArchiveTraining OPERATOR_JAR ARCHIVE}: exits 0 once the archive is written; 1 when the
 * operator did not gate every pod in time or no archive was written (the build fails: an archive of
 * a start that went wrong would hold the wrong classes).
 */
public final class ArchiveTraining {
  private static final long WINDOW = 1_048_576;
  private static final int MODEL_DEPLOYMENTS = 4;
  private static final int PODS_PER_MODEL_DEPLOYMENT = 5;
  private static final Duration GATED_WITHIN = Duration.ofSeconds(120);
  private static final String NAMESPACE = "models";
  private static final String OPERATOR_NAMESPACE = "kvguard-system";

  private ArchiveTraining() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ArchiveTraining OPERATOR_JAR ARCHIVE");
      System.exit(2);
    }
    Path jar = Path.of(args[0]).toRealPath();
    Path archive = Path.of(args[1]).toAbsolutePath().normalize();
    Files.deleteIfExists(archive);
    ScaleBenchmark.quietLogs();
    boolean gated;
    try (EmbeddedApiServer api = new EmbeddedApiServer();
        LoopbackEngines engines = new LoopbackEngines(shapes(), "/server_info")) {
      NamespacedKubernetesClient client = api.client();
      List<String> pods = setUp(api, client, engines);
      int metricsPort = freePort();
      int healthPort = freePort();
      Process operator = launch(jar, archive, api.url(), metricsPort, healthPort);
      try {
        gated = awaitGates(client, pods, operator);
        if (gated) {
          // The classes a scrape and the kubelet's probes load.
          get("http://127.0.0.1:" + metricsPort + "/metrics");
          get("http://127.0.0.1:" + healthPort + "/readyz");
        }
      } finally {
        operator.destroy();
        if (!operator.waitFor(60, TimeUnit.SECONDS)) {
          operator.destroyForcibly();
        }
      }
    }
    long size = Files.exists(archive) ? Files.size(archive) : 0;
    if (!gated || size == 0) {
      System.err.printf(
          "archive training failed: every pod gated=%s, archive %s (%d bytes); the operator's"
              + " output is in %s%n",
          gated, archive, size, log(archive));
      System.exit(1);
    }
    System.out.printf("wrote %s (%d bytes)%n", archive, size);
    System.exit(0);
  }

  /** Four pools in five too small for the window: both verdicts' classes are loaded. */
  private static List<Map<String, Answer>> shapes() {
    List<Map<String, Answer>> shapes = new ArrayList<>();
    for (int i = 0; i < MODEL_DEPLOYMENTS * PODS_PER_MODEL_DEPLOYMENT; i++) {
      long pool = i % 5 == 4 ? ScaleBenchmark.SMALL_POOL : 2_040_000;
      shapes.add(EngineShapes.sglang(WINDOW, null, "0.5.22", pool));
    }
    return shapes;
  }

  private static List<String> setUp(
      EmbeddedApiServer api, NamespacedKubernetesClient client, LoopbackEngines engines) {
    api.applyModelDeploymentCrd(client);
    for (String ns : List.of(NAMESPACE, OPERATOR_NAMESPACE)) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    SimulatedPods simulated = new SimulatedPods(client);
    List<String> pods = new ArrayList<>();
    for (int md = 0; md < MODEL_DEPLOYMENTS; md++) {
      String name = "model-" + md;
      for (int p = 0; p < PODS_PER_MODEL_DEPLOYMENT; p++) {
        String pod = name + "-" + p;
        simulated.createRunning(
            NAMESPACE,
            pod,
            Map.of("app", name),
            engines.port(md * PODS_PER_MODEL_DEPLOYMENT + p),
            true);
        pods.add(pod);
      }
      client
          .resources(ModelDeployment.class)
          .inNamespace(NAMESPACE)
          .resource(policy(name))
          .create();
    }
    return pods;
  }

  private static ModelDeployment policy(String name) {
    return PodCacheBenchmark.policy(NAMESPACE, name);
  }

  /** The jar as the image's ENTRYPOINT runs it, with the image's and the chart's settings. */
  private static Process launch(
      Path jar, Path archive, String apiUrl, int metricsPort, int healthPort) throws IOException {
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:ArchiveClassesAtExit=" + archive,
            "-XX:TieredStopAtLevel=1",
            "-Djava.io.tmpdir=" + archive.getParent(),
            "-jar",
            jar.toString());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log(archive).toFile());
    Map<String, String> env = builder.environment();
    env.put("KUBERNETES_MASTER", apiUrl);
    env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
    env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
    env.put("KUBERNETES_HTTP2_DISABLE", "true");
    env.put("KUBERNETES_NAMESPACE", OPERATOR_NAMESPACE);
    env.put("KVGUARD_LEADER_ELECTION", "true");
    env.put("KVGUARD_WEBHOOK_ENABLED", "false");
    env.put("KVGUARD_METRICS_PORT", String.valueOf(metricsPort));
    env.put("KVGUARD_METRICS_BIND_ADDRESS", "127.0.0.1");
    env.put("KVGUARD_HEALTH_PORT", String.valueOf(healthPort));
    env.put("POD_NAME", "kvguard-archive-training");
    return builder.start();
  }

  private static Path log(Path archive) {
    return archive.resolveSibling(archive.getFileName() + ".log");
  }

  /** Whether every pod's gate condition was written (True or False) before the deadline. */
  private static boolean awaitGates(
      NamespacedKubernetesClient client, List<String> pods, Process operator) {
    long deadline = System.nanoTime() + GATED_WITHIN.toNanos();
    while (System.nanoTime() < deadline && operator.isAlive()) {
      if (pods.stream()
          .allMatch(name -> gated(client.pods().inNamespace(NAMESPACE).withName(name).get()))) {
        return true;
      }
      Waits.sleep(200);
    }
    return false;
  }

  private static boolean gated(Pod pod) {
    return pod != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> c.getType().equals(GateNames.CONDITION_TYPE));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static void get(String url) throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IllegalStateException(url + " answered " + response.statusCode());
    }
  }
}

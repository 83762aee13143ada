package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.testkit.SimulatedPods;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The four attacks of issue 20 against the operator as the chart runs it: a child JVM with the
 * chart's JVM options and heap ({@link OperatorJvm#launchAsTheChartRunsIt}), serving /metrics and
 * /healthz like {@code OperatorMain}, against the embedded API server, with hostile engines on
 * loopback in namespace {@value #HOSTILE} and an innocent tenant in {@value #INNOCENT}. Used by
 * {@code HostileTenantsIT} (which asserts) and {@link HostileBenchmark} (which prints heap
 * figures).
 */
public final class HostileTenants implements AutoCloseable {
  public static final String HOSTILE = "hostile";
  public static final String INNOCENT = "innocent";
  public static final long WINDOW = 1_048_576;

  /** The claim of attack 2: pool and context of 30,000,000 tokens. */
  public static final long HUGE_CLAIM = 30_000_000;

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private final SimulatedPods pods = new SimulatedPods(client);
  private final List<AutoCloseable> engines = new ArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final List<Socket> halfSent = new ArrayList<>();
  private OperatorJvm operator;
  private int healthPort;
  private int metricsPort;

  /**
   * The API server, the namespaces, and the operator JVM serving with the chart's settings plus
   * {@code env}.
   */
  public static HostileTenants start(Map<String, String> env) throws IOException {
    return prepare().launch(env);
  }

  /**
   * The API server and the namespaces, no operator yet: what is stored now is there when it starts
   * ({@link #launch}).
   */
  public static HostileTenants prepare() {
    HostileTenants cluster = new HostileTenants();
    cluster.api.applyModelDeploymentCrd(cluster.client);
    for (String ns : List.of(HOSTILE, INNOCENT, ScaleBenchmark.OPERATOR_NAMESPACE)) {
      cluster
          .client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    return cluster;
  }

  /** The operator JVM serving with the chart's settings plus {@code env}. */
  public HostileTenants launch(Map<String, String> env) throws IOException {
    HostileTenants cluster = this;
    cluster.operator = OperatorJvm.launchAsTheChartRunsIt(cluster.api.url());
    Map<String, String> chart = new LinkedHashMap<>();
    chart.put("KVGUARD_LEADER_ELECTION", "true");
    chart.put("KVGUARD_LEADER_ELECTION_NAMESPACE", ScaleBenchmark.OPERATOR_NAMESPACE);
    chart.put("POD_NAME", "kvguard-hostile-0");
    chart.put("KVGUARD_HEALTH_PORT", "0");
    chart.put("KVGUARD_METRICS_PORT", "0");
    chart.put("KVGUARD_METRICS_BIND_ADDRESS", "127.0.0.1");
    chart.putAll(env);
    int[] ports = cluster.operator.serve(chart);
    cluster.healthPort = ports[0];
    cluster.metricsPort = ports[1];
    return cluster;
  }

  public OperatorJvm operator() {
    return operator;
  }

  public NamespacedKubernetesClient client() {
    return client;
  }

  /**
   * Attack 1: {@code count} vLLM pods whose /metrics is {@code bytes} of junk series (no
   * cache_config_info).
   */
  public void junkPages(int count, int bytes) throws IOException {
    Map<String, Answer> shape =
        new LinkedHashMap<>(EngineShapes.vllm(WINDOW, 127_500, 16, 2_040_000L));
    shape.put("/metrics", Answer.prometheus(junkPage(bytes)));
    LoopbackEngines served = serve(java.util.Collections.nCopies(count, shape));
    for (int i = 0; i < count; i++) {
      pods.createRunning(HOSTILE, "junk-" + i, Map.of("attack", "junk"), served.port(i), true);
    }
    client.resource(policy(HOSTILE, "junk", Engine.VLLM, Map.of("attack", "junk"), 5, 5)).create();
  }

  /** Junk series of one sample each, about 34 bytes a line, up to {@code bytes}. */
  public static String junkPage(int bytes) {
    StringBuilder page = new StringBuilder(bytes + 64);
    for (int i = 0; page.length() < bytes; i++) {
      page.append("junk_series_").append(i).append("{a=\"b\"} 1\n");
    }
    return page.toString();
  }

  /**
   * Attack 2: an SGLang pod claiming a 30,000,000-token pool and context, its policy with the
   * rejection probe on.
   */
  public void hugeClaim() throws IOException {
    LoopbackEngines served =
        // A release whose max_req_input_len formula kvguard has read (0.5.16-0.5.18), so the probe
        // reaches its prompt-size cap rather than stopping at the version.
        serve(List.of(EngineShapes.sglang(HUGE_CLAIM, null, "0.5.18", HUGE_CLAIM)));
    pods.createRunning(HOSTILE, "claims-0", Map.of("attack", "claim"), served.port(0), true);
    ModelDeployment md = policy(HOSTILE, "claim", Engine.SGLANG, Map.of("attack", "claim"), 5, 1);
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    md.getSpec().setRejectionProbe(rejection);
    client.resource(md).create();
  }

  /**
   * Attack 3: one pod that accepts connections and never answers, selected by {@code policies}
   * policies in its namespace, each with its own timeout (261 to 300 s), so no two share a probe.
   */
  public void neverAnswering(int policies) throws IOException {
    ServerSocket silent = new ServerSocket(0, 4096, InetAddress.getLoopbackAddress());
    engines.add(silent);
    pods.createRunning(
        HOSTILE, "silent-0", Map.of("attack", "silent"), silent.getLocalPort(), true);
    for (int i = 0; i < policies; i++) {
      client
          .resource(
              policy(
                  HOSTILE, "silent-" + i, Engine.SGLANG, Map.of("attack", "silent"), 300 - i, 60))
          .create();
    }
  }

  /**
   * Issue 28 §4's attack: {@code namespaces} namespaces ({@code hang-0}, ...) of {@code podsEach}
   * pods whose engine accepts TCP connections and never answers, each namespace with a policy
   * probing every {@code periodSeconds} with a 60 s timeout. Returns the namespaces.
   */
  public List<String> hangingNamespaces(int namespaces, int podsEach, int periodSeconds)
      throws IOException {
    // The kernel completes the connections into the backlog; nobody ever reads them.
    ServerSocket silent = new ServerSocket(0, 4096, InetAddress.getLoopbackAddress());
    engines.add(silent);
    List<String> names = new ArrayList<>();
    for (int n = 0; n < namespaces; n++) {
      String ns = "hang-" + n;
      names.add(ns);
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      for (int i = 0; i < podsEach; i++) {
        pods.createRunning(ns, "hang-" + i, Map.of("attack", "hang"), silent.getLocalPort(), true);
      }
      client
          .resource(policy(ns, "hang", Engine.SGLANG, Map.of("attack", "hang"), 60, periodSeconds))
          .create();
    }
    return names;
  }

  /**
   * A tenant in namespace {@code warm} like the innocent one, created now: once its pod is verified
   * ({@link #warmedUp}) the operator has run every step a verdict takes, so a measurement after it
   * does not count the first pass's class loading.
   */
  public void warmUp() throws IOException {
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName("warm").endMetadata().build())
        .create();
    LoopbackEngines served = serve(List.of(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    pods.createRunning("warm", "serve-0", Map.of("app", "warm"), served.port(0), true);
    client.resource(policy("warm", "warm", Engine.SGLANG, Map.of("app", "warm"), 5, 60)).create();
  }

  /** Whether the {@link #warmUp} tenant's pod is verified. */
  public boolean warmedUp() {
    return verified(client.pods().inNamespace("warm").withName("serve-0").get());
  }

  /** Whether every policy of these namespaces has been reconciled (its probes requested). */
  public boolean reconciled(List<String> namespaces) {
    return namespaces.stream()
        .allMatch(
            ns ->
                client.resources(ModelDeployment.class).inNamespace(ns).list().getItems().stream()
                    .allMatch(md -> md.getStatus() != null));
  }

  /** Pods of these namespaces whose gate is open: there must never be any. */
  public List<String> openGates(List<String> namespaces) {
    List<String> open = new ArrayList<>();
    for (String ns : namespaces) {
      for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
        if (condition(pod).filter(c -> "True".equals(c.getStatus())).isPresent() || labelled(pod)) {
          open.add(ns + "/" + pod.getMetadata().getName());
        }
      }
    }
    return open;
  }

  /** Attack 4: {@code count} connections to the health port that send half a request and hold. */
  public void halfSendToHealthPort(int count) throws IOException {
    for (int i = 0; i < count; i++) {
      Socket socket = new Socket(InetAddress.getLoopbackAddress(), healthPort);
      OutputStream out = socket.getOutputStream();
      out.write("GET /healthz HTTP/1.1\r\nHost: kvguard\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      halfSent.add(socket);
    }
  }

  /**
   * Issue 29's attack: a ModelDeployment in {@value #HOSTILE} whose role asks for 3,000,000,000
   * verified pods, more than the Java Integer kvguard reads it into holds. The embedded API server
   * validates no schema, so it stores it as a real one keeps such an object stored before the CRD
   * bounded the field (ratcheting). Its selector matches a running pod of its own.
   */
  public void unreadablePolicy(String name) {
    Map<String, Object> role = new LinkedHashMap<>();
    role.put("name", "serve");
    role.put("selector", Map.of("matchLabels", Map.of("attack", name)));
    role.put("engine", "sglang");
    role.put("port", SimulatedPods.ENGINE_PORT_NAME);
    role.put("minReadyPods", 3_000_000_000L);
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("model", "zai-org/GLM-5.3");
    spec.put("contextWindow", WINDOW);
    spec.put("roles", List.of(role));
    io.fabric8.kubernetes.api.model.GenericKubernetesResource md =
        new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
            .withApiVersion(ModelDeployment.GROUP + "/" + ModelDeployment.VERSION)
            .withKind("ModelDeployment")
            .withNewMetadata()
            .withName(name)
            .withNamespace(HOSTILE)
            .endMetadata()
            .withAdditionalProperties(Map.of("spec", spec))
            .build();
    client
        .genericKubernetesResources(
            ModelDeployment.GROUP + "/" + ModelDeployment.VERSION, "ModelDeployment")
        .inNamespace(HOSTILE)
        .resource(md)
        .create();
    pods.createRunning(HOSTILE, name + "-0", Map.of("attack", name), 1, true);
  }

  /** The Warning Events of {@value #HOSTILE} with this reason, as "object: message". */
  public List<String> hostileEvents(String reason) {
    return client.v1().events().inNamespace(HOSTILE).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()) && "Warning".equals(e.getType()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .toList();
  }

  /** GET /metrics, as Prometheus scrapes it. */
  public String metrics() throws IOException, InterruptedException {
    return http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The innocent tenant: one healthy SGLang pod and its policy, created now. */
  public void innocentTenant() throws IOException {
    innocentTenant(60);
  }

  /** The innocent tenant, its policy probing every {@code periodSeconds}. */
  public void innocentTenant(int periodSeconds) throws IOException {
    LoopbackEngines served = serve(List.of(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    pods.createRunning(INNOCENT, "serve-0", Map.of("app", "innocent"), served.port(0), true);
    client
        .resource(
            policy(
                INNOCENT, "innocent", Engine.SGLANG, Map.of("app", "innocent"), 5, periodSeconds))
        .create();
  }

  /**
   * Whether the innocent tenant's pod is verified: condition True (PoolSufficient) and the routing
   * label.
   */
  public boolean innocentVerified() {
    return verified(client.pods().inNamespace(INNOCENT).withName("serve-0").get());
  }

  private static boolean verified(Pod pod) {
    return pod != null
        && condition(pod)
            .filter(c -> "True".equals(c.getStatus()) && "PoolSufficient".equals(c.getReason()))
            .isPresent()
        && labelled(pod);
  }

  /**
   * What the API server holds for the innocent tenant, for a test that waited in vain: its pod's
   * gate condition and labels, and its ModelDeployment's finalizers, conditions and pod verdicts.
   */
  public String innocentDiagnosis() {
    Pod pod = client.pods().inNamespace(INNOCENT).withName("serve-0").get();
    ModelDeployment md =
        client.resources(ModelDeployment.class).inNamespace(INNOCENT).withName("innocent").get();
    List<String> said = new ArrayList<>();
    said.add(
        pod == null
            ? "pod absent"
            : "pod: "
                + gateCondition(pod).orElse("no kvguard condition")
                + ", labels "
                + pod.getMetadata().getLabels());
    if (md == null) {
      said.add("ModelDeployment absent");
    } else {
      said.add("ModelDeployment finalizers " + md.getMetadata().getFinalizers());
      if (md.getStatus() == null) {
        said.add("no status");
      } else {
        for (Condition c :
            Objects.requireNonNullElse(md.getStatus().conditions, List.<Condition>of())) {
          said.add(c.getType() + "=" + c.getStatus() + " " + c.getReason() + ": " + c.getMessage());
        }
        for (PodVerdictStatus p :
            Objects.requireNonNullElse(md.getStatus().pods, List.<PodVerdictStatus>of())) {
          said.add("pod " + p.name + " " + p.verdict + " " + p.reason + ": " + p.message);
        }
      }
    }
    return String.join("; ", said);
  }

  /** Hostile pods whose gate is open (condition True or routing label): there must never be any. */
  public List<String> openHostileGates() {
    List<String> open = new ArrayList<>();
    for (Pod pod : client.pods().inNamespace(HOSTILE).list().getItems()) {
      if (condition(pod).filter(c -> "True".equals(c.getStatus())).isPresent() || labelled(pod)) {
        open.add(pod.getMetadata().getName());
      }
    }
    return open;
  }

  /**
   * The condition of a hostile pod ("status reason: message"), or empty before kvguard wrote one.
   */
  public Optional<String> hostileCondition(String pod) {
    Pod found = client.pods().inNamespace(HOSTILE).withName(pod).get();
    return found == null ? Optional.empty() : gateCondition(found);
  }

  /** A pod's kvguard condition as "status reason: message", or empty before kvguard wrote one. */
  private static Optional<String> gateCondition(Pod pod) {
    return condition(pod).map(c -> c.getStatus() + " " + c.getReason() + ": " + c.getMessage());
  }

  /**
   * GET /healthz on the health port, as the kubelet does (2 s timeout): true when it answered 200.
   */
  public boolean healthz() {
    try {
      HttpResponse<String> answer =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/healthz"))
                  .timeout(Duration.ofSeconds(2))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      return answer.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static Optional<PodCondition> condition(Pod pod) {
    return pod.getStatus() == null || pod.getStatus().getConditions() == null
        ? Optional.empty()
        : pod.getStatus().getConditions().stream()
            .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
            .findFirst();
  }

  private static boolean labelled(Pod pod) {
    return pod.getMetadata().getLabels() != null
        && "true".equals(pod.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL));
  }

  private LoopbackEngines serve(List<Map<String, Answer>> shapes) throws IOException {
    LoopbackEngines served = new LoopbackEngines(shapes, "/metrics");
    engines.add(served);
    return served;
  }

  private static ModelDeployment policy(
      String namespace,
      String name,
      Engine engine,
      Map<String, String> selector,
      int timeoutSeconds,
      int periodSeconds) {
    RoleSpec role = new RoleSpec();
    role.setName("serve");
    role.setEngine(engine);
    role.setSelector(new LabelSelectorBuilder().withMatchLabels(selector).build());
    role.setPort(new IntOrString(SimulatedPods.ENGINE_PORT_NAME));
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(WINDOW);
    spec.setRoles(List.of(role));
    ProbeSpec probe = new ProbeSpec();
    probe.setTimeoutSeconds(timeoutSeconds);
    probe.setPeriodSeconds(periodSeconds);
    spec.setProbe(probe);
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(name);
    md.getMetadata().setNamespace(namespace);
    md.setSpec(spec);
    return md;
  }

  @Override
  public void close() {
    for (Socket socket : halfSent) {
      try {
        socket.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    if (operator != null) {
      operator.close();
    }
    for (AutoCloseable engine : engines) {
      try {
        engine.close();
      } catch (Exception e) {
        // closing anyway
      }
    }
    client.close();
    api.close();
  }
}

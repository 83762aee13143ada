package io.kvguard.e2e;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.LocalPortForward;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.FakeEngineOptions;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The scenarios' cluster on a real Kubernetes (kind, k3d, anything a kubeconfig reaches). Each
 * driver gets its own namespace; engine pods run the fake-engine image built from this repo
 * (e2e/Dockerfile); an engine restart asks the fake engine's admin port (through a port-forward) to
 * record a new pool and exit, and the kubelet starts a new container. The operator either runs in
 * this JVM ({@code local}) or is already deployed.
 */
final class RealClusterDriver implements ClusterDriver {
  static final String PROPERTY_KUBECONFIG = "kvguard.e2e.kubeconfig";
  static final String NOT_CONFIGURED =
      "no cluster configured for the end-to-end suite: run"
          + " `mvn -B -Pe2e verify -D"
          + PROPERTY_KUBECONFIG
          + "=$HOME/.kube/config` (see docs/e2e.md)";
  private static final int ENGINE_PORT_NUMBER = 30000;
  private static final int ADMIN_PORT_NUMBER = 30001;
  private static final String STATE_FILE = "/state/engine.properties";

  /** What the suite was told on the command line (system properties, see docs/e2e.md). */
  record Settings(
      Path kubeconfig,
      String context,
      String image,
      String pullPolicy,
      boolean localOperator,
      Duration patience) {

    static boolean configured() {
      String value = System.getProperty(PROPERTY_KUBECONFIG);
      return value != null && !value.isBlank();
    }

    static Settings fromSystemProperties() {
      String operator = System.getProperty("kvguard.e2e.operator", "local");
      if (!operator.equals("local") && !operator.equals("deployed")) {
        throw new IllegalArgumentException(
            "kvguard.e2e.operator must be local or deployed, was " + operator);
      }
      String raw = System.getProperty(PROPERTY_KUBECONFIG).strip();
      Path kubeconfig =
          Path.of(raw.startsWith("~/") ? System.getProperty("user.home") + raw.substring(1) : raw);
      return new Settings(
          kubeconfig,
          System.getProperty("kvguard.e2e.context"),
          System.getProperty("kvguard.e2e.image", "kvguard-fake-engine:e2e"),
          System.getProperty("kvguard.e2e.imagePullPolicy", "IfNotPresent"),
          operator.equals("local"),
          Duration.ofSeconds(Long.getLong("kvguard.e2e.timeoutSeconds", 180)));
    }
  }

  private final Settings settings;
  private final KubernetesClient client;
  private final String namespace = "kvguard-e2e-" + UUID.randomUUID().toString().substring(0, 8);
  private final Map<String, FakeEngineOptions> engines = new HashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private KvguardOperator operator;

  RealClusterDriver(Settings settings) throws IOException {
    this.settings = settings;
    if (!Files.isReadable(settings.kubeconfig())) {
      throw new IllegalStateException(
          PROPERTY_KUBECONFIG + " points at " + settings.kubeconfig() + ", which cannot be read");
    }
    Config config = Config.fromKubeconfig(settings.context(), settings.kubeconfig().toFile());
    client = new KubernetesClientBuilder().withConfig(config).build();
    try {
      client.getKubernetesVersion();
    } catch (KubernetesClientException e) {
      client.close();
      throw new IllegalStateException(
          "cannot reach the cluster at "
              + config.getMasterUrl()
              + " (kubeconfig "
              + settings.kubeconfig()
              + (settings.context() == null ? "" : ", context " + settings.context())
              + "): "
              + e.getMessage(),
          e);
    }
    if (settings.localOperator()) {
      applyCrd();
    } else if (client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("modeldeployments.kvguard.io")
            .get()
        == null) {
      client.close();
      throw new IllegalStateException(
          "kvguard.e2e.operator=deployed, but the cluster has no modeldeployments.kvguard.io"
              + " CRD: install the operator first (helm/kvguard) or run with -Dkvguard.e2e.operator=local");
    }
    client
        .namespaces()
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName(namespace)
                .addToLabels("app.kubernetes.io/part-of", "kvguard-e2e")
                .endMetadata()
                .build())
        .create();
    if (settings.localOperator()) {
      KvguardConfig operatorConfig =
          new KvguardConfig(
              Set.of(namespace), 0, false, null, 8, 4 * 1024 * 1024, "kvguard-e2e-local");
      operator =
          KvguardOperator.create(
              client,
              operatorConfig,
              new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
              Clock.systemUTC(),
              false);
      operator.start();
    }
  }

  /**
   * The CRD this build generated, created or updated: the local operator must run against its own
   * schema.
   */
  private void applyCrd() throws IOException {
    try (InputStream yaml =
        RealClusterDriver.class.getResourceAsStream(
            "/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")) {
      if (yaml == null) {
        throw new IllegalStateException(
            "the generated CRD is not on the classpath; run the suite through Maven");
      }
      CustomResourceDefinition crd =
          client.getKubernetesSerialization().unmarshal(yaml, CustomResourceDefinition.class);
      client
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .resource(crd)
          .createOr(NonDeletingOperation::update);
      client
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(
              c ->
                  c != null
                      && c.getStatus() != null
                      && c.getStatus().getConditions() != null
                      && c.getStatus().getConditions().stream()
                          .anyMatch(
                              s ->
                                  "Established".equals(s.getType())
                                      && "True".equals(s.getStatus())),
              60,
              TimeUnit.SECONDS);
    }
  }

  @Override
  public KubernetesClient client() {
    return client;
  }

  @Override
  public String namespace() {
    return namespace;
  }

  @Override
  public Duration patience() {
    return settings.patience();
  }

  @Override
  public boolean kubeletComputesReadiness() {
    return true;
  }

  /** The pod the suite deploys for one fake engine; public shape, so docs/e2e.md can show it. */
  static Pod enginePod(
      String namespace,
      String name,
      Map<String, String> labels,
      FakeEngineOptions engine,
      String image,
      String pullPolicy) {
    List<String> args = new ArrayList<>(List.of("fake-engine"));
    args.addAll(engine.toArgs());
    args.addAll(
        List.of(
            "--port",
            Integer.toString(ENGINE_PORT_NUMBER),
            "--admin-port",
            Integer.toString(ADMIN_PORT_NUMBER),
            "--state-file",
            STATE_FILE));
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(namespace)
        .withLabels(labels)
        .endMetadata()
        .withNewSpec()
        .withRestartPolicy("Always")
        .withTerminationGracePeriodSeconds(1L)
        .addNewReadinessGate()
        .withConditionType(GateNames.CONDITION_TYPE)
        .endReadinessGate()
        .addNewContainer()
        .withName("engine")
        .withImage(image)
        .withImagePullPolicy(pullPolicy)
        .withArgs(args)
        .addNewPort()
        .withName(ENGINE_PORT)
        .withContainerPort(ENGINE_PORT_NUMBER)
        .endPort()
        .addNewPort()
        .withName("admin")
        .withContainerPort(ADMIN_PORT_NUMBER)
        .endPort()
        .addNewVolumeMount()
        .withName("state")
        .withMountPath("/state")
        .endVolumeMount()
        .withNewResources()
        .addToRequests("cpu", new Quantity("50m"))
        .addToRequests("memory", new Quantity("96Mi"))
        .addToLimits("memory", new Quantity("192Mi"))
        .endResources()
        .endContainer()
        // emptyDir outlives container restarts: the restarted engine reads the pool it was told to
        // come back with.
        .addNewVolume()
        .withName("state")
        .withNewEmptyDir()
        .endEmptyDir()
        .endVolume()
        .endSpec()
        .build();
  }

  /**
   * Whether kvguard runs in the cluster (the chart's webhook can then be called by the API server).
   */
  boolean operatorDeployed() {
    return !settings.localOperator();
  }

  /**
   * Labels the test namespace, e.g. with the webhook's kvguard.io/readiness-gate-injection=enabled.
   */
  void labelNamespace(String key, String value) {
    client
        .namespaces()
        .withName(namespace)
        .edit(
            ns -> {
              ns.getMetadata().getLabels().put(key, value);
              return ns;
            });
  }

  /**
   * A Deployment of one fake engine whose pod template declares no readiness gate (what a
   * controller that exposes none generates); returns its pod once the engine container runs.
   */
  Pod createEngineDeployment(String name, Map<String, String> labels, FakeEngineOptions engine) {
    Pod template =
        enginePod(namespace, name, labels, engine, settings.image(), settings.pullPolicy());
    template.getSpec().setReadinessGates(null);
    client
        .apps()
        .deployments()
        .inNamespace(namespace)
        .resource(
            new io.fabric8.kubernetes.api.model.apps.DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(namespace)
                .endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withNewSelector()
                .withMatchLabels(labels)
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(labels)
                .endMetadata()
                .withSpec(template.getSpec())
                .endTemplate()
                .endSpec()
                .build())
        .create();
    Pod pod =
        client
            .pods()
            .inNamespace(namespace)
            .withLabels(labels)
            .waitUntilCondition(p -> p != null, settings.patience().toSeconds(), TimeUnit.SECONDS);
    String podName = pod.getMetadata().getName();
    engines.put(podName, engine);
    return awaitEngineRunning(podName, 0);
  }

  @Override
  public void createEnginePod(String name, Map<String, String> labels, FakeEngineOptions engine) {
    client
        .pods()
        .inNamespace(namespace)
        .resource(
            enginePod(namespace, name, labels, engine, settings.image(), settings.pullPolicy()))
        .create();
    engines.put(name, engine);
    Pod running = awaitEngineRunning(name, 0);
    if (settings.localOperator()) {
      requireReachable(running);
    }
  }

  private Pod awaitEngineRunning(String name, int restarts) {
    try {
      return client
          .pods()
          .inNamespace(namespace)
          .withName(name)
          .waitUntilCondition(
              pod -> {
                ContainerStatus engine = engineStatus(pod);
                return engine != null
                    && engine.getState() != null
                    && engine.getState().getRunning() != null
                    && engine.getRestartCount() != null
                    && engine.getRestartCount() >= restarts
                    && pod.getStatus().getPodIP() != null;
              },
              settings.patience().toSeconds(),
              TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      Pod pod = client.pods().inNamespace(namespace).withName(name).get();
      throw new IllegalStateException(
          "engine pod "
              + namespace
              + "/"
              + name
              + " did not run within "
              + settings.patience().toSeconds()
              + " s (image "
              + settings.image()
              + "; is it built and loaded into the"
              + " cluster? see docs/e2e.md). Last status: "
              + (pod == null ? "gone" : pod.getStatus()),
          e);
    }
  }

  private static ContainerStatus engineStatus(Pod pod) {
    if (pod == null || pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return null;
    }
    return pod.getStatus().getContainerStatuses().stream()
        .filter(s -> "engine".equals(s.getName()))
        .findFirst()
        .orElse(null);
  }

  /**
   * A local operator probes pod IPs from this machine; say so plainly when it cannot reach them.
   */
  private void requireReachable(Pod pod) {
    String ip = pod.getStatus().getPodIP();
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(ip, ENGINE_PORT_NUMBER), 3000);
    } catch (IOException e) {
      throw new IllegalStateException(
          "the operator runs in this JVM (-Dkvguard.e2e.operator=local) but pod IP "
              + ip
              + " port "
              + ENGINE_PORT_NUMBER
              + " is not reachable from this machine ("
              + e.getMessage()
              + "). Route the"
              + " pod network here or deploy the operator and run with -Dkvguard.e2e.operator=deployed (docs/e2e.md)",
          e);
    }
  }

  @Override
  public void restartEngine(String name, FakeEngineOptions engine) {
    FakeEngineOptions before = engines.get(name);
    if (!Objects.equals(before.withPool(engine.poolPerRank()), engine)) {
      throw new IllegalArgumentException(
          "on a real cluster a restart changes the pool only; the pod's other figures"
              + " are in its command line");
    }
    int restarts = engineStatus(pod(name)).getRestartCount();
    try (LocalPortForward admin =
        client.pods().inNamespace(namespace).withName(name).portForward(ADMIN_PORT_NUMBER)) {
      HttpRequest request =
          HttpRequest.newBuilder(
                  URI.create(
                      "http://127.0.0.1:"
                          + admin.getLocalPort()
                          + "/admin/restart?pool="
                          + engine.poolPerRank()))
              .timeout(Duration.ofSeconds(10))
              .POST(HttpRequest.BodyPublishers.noBody())
              .build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 202) {
        throw new IllegalStateException(
            "fake engine "
                + name
                + " refused the restart: HTTP "
                + response.statusCode()
                + " "
                + response.body());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while restarting " + name, e);
    }
    engines.put(name, engine);
    awaitEngineRunning(name, restarts + 1);
  }

  @Override
  public void close() {
    try {
      // Delete the policies while the operator still runs, so their finalizers are released.
      client.resources(ModelDeployment.class).inNamespace(namespace).delete();
      client
          .resources(ModelDeployment.class)
          .inNamespace(namespace)
          .informOnCondition(List::isEmpty)
          .get(settings.patience().toSeconds(), TimeUnit.SECONDS);
    } catch (Exception e) {
      // Best effort: the namespace deletion below still removes everything but a stuck finalizer.
    } finally {
      if (operator != null) {
        operator.close();
      }
      client.namespaces().withName(namespace).delete();
      client.close();
    }
  }
}

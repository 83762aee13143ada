package io.kvguard.testing;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.SimulatedPods;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An API server, the operator as production wires it (leader election on, JSON patches only), and
 * helpers to create fake engine pods. One per test class; closed after it.
 */
public final class OperatorHarness implements AutoCloseable {
  public static final String NAMESPACE = "inference";
  public static final String OPERATOR_NAMESPACE = "kvguard-system";

  public final EmbeddedApiServer api = new EmbeddedApiServer();

  /**
   * The operator's own identity on the API server, so its requests can be checked against the
   * chart's RBAC.
   */
  public static final String OPERATOR_AGENT = "kvguard-operator-under-test";

  public final NamespacedKubernetesClient client = api.client();
  private final io.fabric8.kubernetes.client.KubernetesClient operatorClient =
      new io.fabric8.kubernetes.client.KubernetesClientBuilder()
          .withConfig(
              new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                  .withUserAgent(OPERATOR_AGENT)
                  .build())
          .build();
  private String rbacValues = "";
  public final SimulatedPods pods = new SimulatedPods(client);
  public final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final List<FakeEngine> engines = new ArrayList<>();
  private final List<io.fabric8.kubernetes.api.model.Event> eventHistory =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private final io.fabric8.kubernetes.client.Watch eventWatch;
  private KvguardOperator operator;

  public OperatorHarness() {
    api.applyModelDeploymentCrd(client);
    for (String ns : List.of(NAMESPACE, OPERATOR_NAMESPACE)) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
    }
    eventWatch =
        client
            .v1()
            .events()
            .inNamespace(NAMESPACE)
            .watch(
                new io.fabric8.kubernetes.client.Watcher<>() {
                  @Override
                  public void eventReceived(
                      Action action, io.fabric8.kubernetes.api.model.Event event) {
                    if (action == Action.ADDED || action == Action.MODIFIED) {
                      eventHistory.add(event);
                    }
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
                });
  }

  public static KvguardConfig productionConfig() {
    return new KvguardConfig(
        Set.of(),
        0,
        true,
        OPERATOR_NAMESPACE,
        8,
        io.kvguard.probe.EngineHttp.DEFAULT_MAX_BODY_BYTES,
        "kvguard-test-0");
  }

  public OperatorHarness start() {
    return start(productionConfig());
  }

  public OperatorHarness start(KvguardConfig config) {
    return start(config, () -> {});
  }

  /**
   * @param onStepDown what the replica does where production exits (a lost lease, an informer that
   *     stopped for good)
   */
  public OperatorHarness start(KvguardConfig config, Runnable onStepDown) {
    // A router named by spec.rejectionProbe.router is a fake engine on loopback here, at the port
    // the spec names.
    operator =
        KvguardOperator.create(
            operatorClient,
            config,
            registry,
            Clock.systemUTC(),
            onStepDown,
            (service, namespace, clusterIP) -> "127.0.0.1");
    operator.start();
    return this;
  }

  /** The running operator, or null before {@link #start()} and after {@link #stopOperator()}. */
  public KvguardOperator operator() {
    return operator;
  }

  public void stopOperator() {
    if (operator != null) {
      operator.close();
      operator = null;
    }
  }

  public FakeEngine engine(Map<String, FakeEngine.Answer> answers) {
    try {
      FakeEngine engine = new FakeEngine().serve(answers);
      engines.add(engine);
      return engine;
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public Pod pod(String name, Map<String, String> labels, FakeEngine engine) {
    return pods.createRunning(NAMESPACE, name, labels, engine.port(), true);
  }

  /**
   * A router's Service as the proof wants it (spec.rejectionProbe.router): type ClusterIP, with a
   * selector picking the router's pods. kvguard reads it before each proof; the proof itself
   * reaches the fake router on loopback (the harness's router address).
   */
  public io.fabric8.kubernetes.api.model.Service routerService(String name, int port) {
    return service(
        new io.fabric8.kubernetes.api.model.ServiceBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(NAMESPACE)
            .endMetadata()
            .withNewSpec()
            .withType("ClusterIP")
            // The mock API server allocates none; a real one does (the proof is sent there).
            .withClusterIP("10.96.0.10")
            .withSelector(Map.of("app", name))
            .addNewPort()
            .withPort(port)
            .endPort()
            .endSpec()
            .build());
  }

  /** Creates a Service in the test namespace as given. */
  public io.fabric8.kubernetes.api.model.Service service(
      io.fabric8.kubernetes.api.model.Service service) {
    return client.services().inNamespace(NAMESPACE).resource(service).create();
  }

  public static RoleSpec role(String name, Engine engine, Map<String, String> matchLabels) {
    RoleSpec role = new RoleSpec();
    role.setName(name);
    role.setEngine(engine);
    role.setSelector(new LabelSelectorBuilder().withMatchLabels(matchLabels).build());
    role.setPort(new IntOrString(SimulatedPods.ENGINE_PORT_NAME));
    return role;
  }

  public ModelDeployment modelDeployment(String name, long window, RoleSpec... roles) {
    return policy(name, window, roles);
  }

  /** A ModelDeployment of the test namespace, not yet created (for tests without a harness). */
  public static ModelDeployment policy(String name, long window, RoleSpec... roles) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(name);
    md.getMetadata().setNamespace(NAMESPACE);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(window);
    spec.setRoles(List.of(roles));
    md.setSpec(spec);
    return md;
  }

  public ModelDeployment create(ModelDeployment md) {
    return client.resources(ModelDeployment.class).inNamespace(NAMESPACE).resource(md).create();
  }

  /**
   * Edits a ModelDeployment's spec as a user would: read, change, write; a write refused because
   * the operator wrote the status in between (409) is made again on the new version, as kubectl
   * edit would have the user do.
   */
  public ModelDeployment editSpec(
      String name,
      java.util.function.Consumer<io.kvguard.customresource.ModelDeploymentSpec> change) {
    for (int attempt = 1; ; attempt++) {
      ModelDeployment md = get(name);
      change.accept(md.getSpec());
      try {
        return client.resource(md).update();
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  public ModelDeployment get(String name) {
    return client.resources(ModelDeployment.class).inNamespace(NAMESPACE).withName(name).get();
  }

  /** The ModelDeployment's status; an AssertionError (so awaits retry) while it has none yet. */
  public io.kvguard.customresource.ModelDeploymentStatus status(String name) {
    ModelDeployment md = get(name);
    if (md == null || md.getStatus() == null) {
      throw new AssertionError("ModelDeployment " + name + " has no status yet");
    }
    return md.getStatus();
  }

  public Pod getPod(String name) {
    return client.pods().inNamespace(NAMESPACE).withName(name).get();
  }

  public Optional<PodCondition> gate(String podName) {
    Pod pod = getPod(podName);
    if (pod == null || pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return pod.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  public boolean labelled(String podName) {
    Pod pod = getPod(podName);
    return pod != null
        && pod.getMetadata().getLabels() != null
        && "true".equals(pod.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL));
  }

  public Optional<String> condition(String mdName, String type) {
    ModelDeployment md = get(mdName);
    if (md == null || md.getStatus() == null || md.getStatus().conditions == null) {
      return Optional.empty();
    }
    return md.getStatus().conditions.stream()
        .filter(c -> type.equals(c.getType()))
        .map(c -> c.getStatus())
        .findFirst();
  }

  /**
   * The Event objects there are now (one per ModelDeployment and reason: later transitions update
   * them).
   */
  public List<io.fabric8.kubernetes.api.model.Event> events() {
    return client.v1().events().inNamespace(NAMESPACE).list().getItems();
  }

  /**
   * Waits until a Warning Event of {@code reason} about {@code object} (a ModelDeployment or pod of
   * the namespace) says every one of {@code says}.
   */
  public void awaitWarning(
      java.time.Duration atMost, String reason, String object, String... says) {
    org.awaitility.Awaitility.await()
        .atMost(atMost)
        .untilAsserted(
            () ->
                org.assertj.core.api.Assertions.assertThat(events())
                    .anySatisfy(
                        e -> {
                          org.assertj.core.api.Assertions.assertThat(e.getType())
                              .isEqualTo("Warning");
                          org.assertj.core.api.Assertions.assertThat(e.getReason())
                              .isEqualTo(reason);
                          org.assertj.core.api.Assertions.assertThat(
                                  e.getInvolvedObject().getName())
                              .isEqualTo(object);
                          org.assertj.core.api.Assertions.assertThat(e.getMessage()).contains(says);
                        }));
  }

  /**
   * Every version of every Event as a watch saw it, oldest first: what {@code kubectl get events
   * -w} shows. Each write announces the transitions of its moment, so this is where each one can be
   * found after later writes to the same Event replaced its message.
   */
  public List<io.fabric8.kubernetes.api.model.Event> eventHistory() {
    return List.copyOf(eventHistory);
  }

  /**
   * Helm values the operator's requests are checked against on close (default: the chart's
   * defaults).
   */
  public OperatorHarness rbacValues(String valuesYaml) {
    this.rbacValues = valuesYaml;
    return this;
  }

  /** The operator's requests so far (the test's own requests carry another User-Agent). */
  public List<EmbeddedApiServer.Request> operatorRequests() {
    return api.requests().stream().filter(r -> OPERATOR_AGENT.equals(r.userAgent())).toList();
  }

  /**
   * Stops everything, then fails the test if the operator made a request the Helm chart's RBAC
   * would refuse: the mock API server enforces no RBAC, so every IT checks the shipped rules this
   * way.
   */
  @Override
  public void close() {
    stopOperator();
    eventWatch.close();
    List<EmbeddedApiServer.Request> made = operatorRequests();
    engines.forEach(FakeEngine::close);
    operatorClient.close();
    client.close();
    api.close();
    List<String> denied = io.kvguard.helm.RenderedRbac.cached(rbacValues).denied(made);
    if (!denied.isEmpty()) {
      throw new AssertionError("requests the Helm chart's RBAC would refuse: " + denied);
    }
  }
}

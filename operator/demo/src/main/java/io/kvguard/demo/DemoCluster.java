package io.kvguard.demo;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.customresource.AdvisoryMode;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngineOptions;
import io.kvguard.testkit.SimulatedPods;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The demo's world: an in-process API server with the generated CRD, one fake SGLang engine per
 * pod, pods that point at them, and the operator as production wires it (minus leader election,
 * which one replica does not need).
 */
final class DemoCluster implements AutoCloseable {
  static final String NAMESPACE = "inference";
  static final String MODEL_DEPLOYMENT = "glm";
  static final String MODEL = "zai-org/GLM-5.3";
  static final long WINDOW = 1_048_576;
  static final long INCIDENT_PREFILL_POOL = 681_280;
  static final long FIXED_PREFILL_POOL = 2_040_000;
  static final long DECODE_POOL = 4_000_000;
  static final int RANKS = 2;
  static final List<String> PREFILL_PODS = List.of("glm-prefill-0", "glm-prefill-1");
  static final List<String> DECODE_PODS = List.of("glm-decode-0", "glm-decode-1");

  final EmbeddedApiServer api;
  final NamespacedKubernetesClient client;
  private final SimulatedPods pods;
  private final Map<String, FakeEngine> engines = new LinkedHashMap<>();
  private final List<AutoCloseable> opened = new ArrayList<>();
  private KvguardOperator operator;

  private DemoCluster() {
    api = new EmbeddedApiServer();
    opened.add(api);
    client = api.client();
    opened.add(0, client);
    pods = new SimulatedPods(client);
  }

  /** The API server with the CRD applied and the namespace created; no engines, no operator yet. */
  static DemoCluster create() {
    DemoCluster cluster = new DemoCluster();
    try {
      cluster.api.applyModelDeploymentCrd(cluster.client);
      cluster
          .client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
          .create();
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  static FakeEngineOptions prefill(long pool) {
    return FakeEngineOptions.sglang(pool, RANKS, WINDOW, "prefill");
  }

  static FakeEngineOptions decode() {
    return FakeEngineOptions.sglang(DECODE_POOL, RANKS, WINDOW, "decode");
  }

  /** Starts a fake engine and a Running pod (with the readiness gate) pointing at it. */
  void enginePod(String name, String role, FakeEngineOptions engine) throws IOException {
    FakeEngine fake = new FakeEngine().serve(engine.answers());
    engines.put(name, fake);
    opened.add(0, fake);
    pods.createRunning(NAMESPACE, name, Map.of("app", "glm", "role", role), fake.port(), true);
  }

  /**
   * The pod's engine process restarts and comes back with other figures, as after a config change.
   */
  void restartEngine(String name, FakeEngineOptions engine) {
    engines.get(name).serve(engine.answers());
    pods.restartEngine(NAMESPACE, name);
  }

  /**
   * The ModelDeployment of the incident: the advertised window over a prefill and a decode role.
   */
  static ModelDeployment incidentModelDeployment() {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(MODEL_DEPLOYMENT);
    md.getMetadata().setNamespace(NAMESPACE);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel(MODEL);
    spec.setContextWindow(WINDOW);
    spec.setRoles(List.of(role("prefill"), role("decode")));
    // The engines report SGLang 0.5.22, which the incident's post-mortem alone names as fixed: with
    // the advisories on, every prefill/decode pod stays shut (KnownUnsafeEngine) until the route
    // through the router is proven. The demo is about the pool, so its platform team has tested the
    // route by hand and accepts that advisory's risk knowingly (Demo narrates this).
    spec.setEngineAdvisories(AdvisoryMode.Disabled);
    // Left out, as a user would leave them out: the operator applies the same defaults as the CRD.
    spec.setMinPoolRatio(null);
    spec.setEnforcement(null);
    md.setSpec(spec);
    return md;
  }

  private static RoleSpec role(String name) {
    RoleSpec role = new RoleSpec();
    role.setName(name);
    role.setEngine(Engine.SGLANG);
    role.setSelector(
        new LabelSelectorBuilder().withMatchLabels(Map.of("app", "glm", "role", name)).build());
    role.setPort(new IntOrString(SimulatedPods.ENGINE_PORT_NAME));
    role.setScheme(null);
    role.setMinReadyPods(null);
    role.setAllowEngineContextAbovePool(null);
    return role;
  }

  ModelDeployment apply(ModelDeployment md) {
    return client.resources(ModelDeployment.class).inNamespace(NAMESPACE).resource(md).create();
  }

  void startOperator() {
    KvguardConfig config =
        new KvguardConfig(Set.of(), 0, false, null, 8, 4 * 1024 * 1024, "kvguard-demo");
    operator =
        KvguardOperator.create(
            client,
            config,
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            Clock.systemUTC(),
            false);
    operator.start();
  }

  @Override
  public void close() {
    if (operator != null) {
      operator.close();
    }
    for (AutoCloseable resource : opened) {
      try {
        resource.close();
      } catch (Exception e) {
        // Shutting down: one stuck resource must not keep the others open.
      }
    }
  }
}

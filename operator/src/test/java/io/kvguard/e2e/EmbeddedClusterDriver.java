package io.kvguard.e2e;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngineOptions;
import io.kvguard.testkit.SimulatedPods;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The scenarios' cluster in CI: the embedded API server, one fake engine per pod on loopback,
 * SimulatedPods in the kubelet's place, and the operator in-process as production wires it (leader
 * election on).
 */
final class EmbeddedClusterDriver implements ClusterDriver {
  private static final String NAMESPACE = "inference";
  private static final String OPERATOR_NAMESPACE = "kvguard-system";

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private final SimulatedPods pods = new SimulatedPods(client);
  private final Map<String, FakeEngine> engines = new LinkedHashMap<>();
  private final KvguardOperator operator;

  EmbeddedClusterDriver() {
    api.applyModelDeploymentCrd(client);
    for (String namespace : List.of(NAMESPACE, OPERATOR_NAMESPACE)) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
    }
    KvguardConfig config =
        new KvguardConfig(
            Set.of(), 0, true, OPERATOR_NAMESPACE, 8, 4 * 1024 * 1024, "kvguard-e2e-0");
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
  public KubernetesClient client() {
    return client;
  }

  @Override
  public String namespace() {
    return NAMESPACE;
  }

  @Override
  public Duration patience() {
    return Duration.ofSeconds(20);
  }

  @Override
  public boolean kubeletComputesReadiness() {
    return false;
  }

  @Override
  public void createEnginePod(String name, Map<String, String> labels, FakeEngineOptions engine) {
    try {
      FakeEngine fake = new FakeEngine().serve(engine.answers());
      engines.put(name, fake);
      pods.createRunning(NAMESPACE, name, labels, fake.port(), true);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void restartEngine(String name, FakeEngineOptions engine) {
    engines.get(name).serve(engine.answers());
    pods.restartEngine(NAMESPACE, name);
  }

  @Override
  public void close() {
    operator.close();
    engines.values().forEach(FakeEngine::close);
    client.close();
    api.close();
  }
}

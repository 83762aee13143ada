package io.kvguard.testing;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The one ModelDeployment ("glm", the incident's window, one SGLang role) of a test that talks to
 * the API server directly, without an operator.
 */
public final class OnePolicy implements AutoCloseable {
  public static final String NAME = "glm";

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();

  /** An API server of its own, with the ModelDeployment CRD. */
  public OnePolicy() {
    api.applyModelDeploymentCrd(client);
  }

  public EmbeddedApiServer api() {
    return api;
  }

  public NamespacedKubernetesClient client() {
    return client;
  }

  @Override
  public void close() {
    client.close();
    api.close();
  }

  /** Creates it in the test namespace with {@code finalizers}; returns the server's copy. */
  public ModelDeployment create(List<String> finalizers) {
    ModelDeployment md =
        OperatorHarness.policy(
            NAME, 1_048_576L, OperatorHarness.role("serve", Engine.SGLANG, Map.of("app", NAME)));
    md.getMetadata().setFinalizers(new ArrayList<>(finalizers));
    return client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(md)
        .create();
  }

  /** The server's copy, or null. */
  public ModelDeployment onServer() {
    return client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(NAME)
        .get();
  }
}

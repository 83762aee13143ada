package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kvguard's finalizer, added by one JSON patch (PolicyFinalizer.add) instead of fabric8's edit
 * diff: it must keep what the diff kept, another writer's finalizers, including one added after the
 * pass read the policy.
 */
class PolicyFinalizerTest {
  private static final String OTHER = "example.com/backup";

  private EmbeddedApiServer api;
  private NamespacedKubernetesClient client;

  @BeforeEach
  void start() {
    api = new EmbeddedApiServer();
    client = api.client();
    api.applyModelDeploymentCrd(client);
  }

  @AfterEach
  void stop() {
    client.close();
    api.close();
  }

  private ModelDeployment create(List<String> finalizers) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName("glm");
    md.getMetadata().setNamespace(OperatorHarness.NAMESPACE);
    md.getMetadata().setFinalizers(new ArrayList<>(finalizers));
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(OperatorHarness.role("serve", Engine.SGLANG, Map.of("app", "glm"))));
    md.setSpec(spec);
    return client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(md)
        .create();
  }

  private ModelDeployment onServer() {
    return client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .get();
  }

  @Test
  void theFinalizerIsAddedBesideAnotherWritersAndTheAnswerIsTheServersCopy() {
    ModelDeployment md = create(List.of(OTHER));

    ModelDeployment written = PolicyFinalizer.add(client, md);

    assertThat(onServer().getMetadata().getFinalizers())
        .containsExactly(OTHER, PolicyFinalizer.NAME);
    assertThat(written.getMetadata().getResourceVersion())
        .isEqualTo(onServer().getMetadata().getResourceVersion());
  }

  @Test
  void aFinalizerAnotherWriterAddedAfterThePassReadThePolicyIsKept() {
    ModelDeployment read = create(List.of());
    // Another controller adds its finalizer after the pass read the policy: the pass's copy is
    // stale.
    ModelDeployment theirs = onServer();
    theirs.getMetadata().setFinalizers(new ArrayList<>(List.of(OTHER)));
    client.resource(theirs).update();

    PolicyFinalizer.add(client, read);

    // Planned on the stale copy alone, the patch would set the list to kvguard's only; the version
    // it carries makes the server refuse it (409), and it is planned again on a fresh read.
    assertThat(onServer().getMetadata().getFinalizers())
        .containsExactly(OTHER, PolicyFinalizer.NAME);
  }

  @Test
  void aPolicyThatHasItOrIsBeingDeletedIsNotWritten() {
    ModelDeployment md = create(List.of(PolicyFinalizer.NAME));
    String version = md.getMetadata().getResourceVersion();

    assertThat(PolicyFinalizer.add(client, md)).isSameAs(md);
    assertThat(onServer().getMetadata().getResourceVersion()).isEqualTo(version);
  }
}

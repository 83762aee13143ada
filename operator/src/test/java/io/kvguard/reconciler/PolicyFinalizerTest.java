package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OnePolicy;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kvguard's finalizer, added by one JSON patch (PolicyFinalizer.add) instead of fabric8's edit
 * diff: it must keep what the diff kept, another writer's finalizers, including one added after the
 * pass read the policy.
 */
class PolicyFinalizerTest {
  private static final String OTHER = "example.com/backup";

  private final OnePolicy glm = new OnePolicy();
  private final EmbeddedApiServer api = glm.api();
  private final NamespacedKubernetesClient client = glm.client();

  @AfterEach
  void stop() {
    glm.close();
  }

  private ModelDeployment create(List<String> finalizers) {
    return glm.create(finalizers);
  }

  private ModelDeployment onServer() {
    return glm.onServer();
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
  void theFinalizerIsOneRequestWhenNothingChangedSinceThePassReadThePolicy() {
    ModelDeployment md = create(List.of());
    api.clearRequests();

    PolicyFinalizer.add(client, md);

    // By name alone fabric8 GETs the policy before patching it (v7.5.2,
    // BaseOperation.getItemOrRequireFromServer): a second round trip in front of every new
    // policy's first gate write.
    assertThat(api.requests())
        .extracting(EmbeddedApiServer.Request::method)
        .containsExactly("PATCH");
    assertThat(onServer().getMetadata().getFinalizers()).containsExactly(PolicyFinalizer.NAME);
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

  @Test
  void aPolicyDeletedAndCreatedAgainUnderTheNameIsNotGivenTheFinalizerForTheOldOne() {
    ModelDeployment read = create(List.of());
    client.resource(read).delete();
    ModelDeployment again = create(List.of());
    assertThat(again.getMetadata().getUid()).isNotEqualTo(read.getMetadata().getUid());

    // The patch planned on the old policy is refused (409, another version); the re-read is the
    // new policy, which this pass knows nothing of: answered with it, the pass would take its
    // version and its status write would land the old policy's conclusions on the new one.
    assertThatThrownBy(() -> PolicyFinalizer.add(client, read))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("created again");
    assertThat(onServer().getMetadata().getUid()).isEqualTo(again.getMetadata().getUid());
    assertThat(onServer().getMetadata().getFinalizers()).doesNotContain(PolicyFinalizer.NAME);
  }

  @Test
  void aPolicyWhoseDeletionStartsAfterThePassReadItFailsTheWriteInsteadOfGoingOnWithoutIt() {
    // Another controller's finalizer keeps the policy while it is being deleted.
    ModelDeployment read = create(List.of(OTHER));
    client.resource(read).delete();
    assertThat(onServer().isMarkedForDeletion()).isTrue();

    // A real API server refuses the new finalizer (422, "no new finalizers can be added if the
    // object is being deleted"); the mock would take it, so the refusal is not what the test
    // relies on: the re-read shows the deletion, and the write the finalizer was for must not be
    // made without it.
    assertThatThrownBy(() -> PolicyFinalizer.add(client, read))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("being deleted");
    assertThat(onServer().getMetadata().getFinalizers()).containsExactly(OTHER);
  }

  @Test
  void aCopyWithoutAFinalizerListGetsOne() {
    ModelDeployment md = create(List.of());
    // fabric8 keeps a null list it is given (ObjectMeta.setFinalizers, or "finalizers": null in
    // JSON); hasFinalizer reads it as empty.
    md.getMetadata().setFinalizers(null);

    PolicyFinalizer.add(client, md);

    assertThat(onServer().getMetadata().getFinalizers()).containsExactly(PolicyFinalizer.NAME);
  }
}

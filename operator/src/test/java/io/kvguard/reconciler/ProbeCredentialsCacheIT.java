package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.SecretKeyRef;
import io.kvguard.testkit.EmbeddedApiServer;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: a cached token goes with the last policy that named it, and the moment its Secret
 * changes.
 */
class ProbeCredentialsCacheIT {
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private final ProbeCredentials credentials = new ProbeCredentials(client, Clock.systemUTC());
  private final ResourceID glm = new ResourceID("glm", "inference");
  private final ResourceID other = new ResourceID("other", "inference");
  private final SecretKeyRef ref = new SecretKeyRef();

  ProbeCredentialsCacheIT() {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("inference").endMetadata().build())
        .create();
    ref.setName("engine-token");
  }

  @AfterEach
  void stop() {
    credentials.close();
    client.close();
    api.close();
  }

  private void secret(String token) {
    client
        .secrets()
        .inNamespace("inference")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("engine-token")
                .endMetadata()
                .addToStringData("token", token)
                .build())
        .createOr(existing -> existing.update());
  }

  @Test
  void aChangedOrDeletedSecretsTokenIsNeverUsedAgain() {
    secret("first");
    assertThat(credentials.token(glm, "inference", ref).token()).contains("first");

    secret("second");
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> credentials.token(glm, "inference", ref).token().equals(Optional.of("second")));

    client.secrets().inNamespace("inference").withName("engine-token").delete();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> credentials.token(glm, "inference", ref).token().isEmpty());
    assertThat(credentials.token(glm, "inference", ref).problem()).contains("does not exist");
  }

  @Test
  void aTokenGoesWithTheLastPolicyThatNamedIt() {
    secret("first");
    credentials.token(glm, "inference", ref);
    credentials.token(other, "inference", ref);
    assertThat(credentials.size()).as("the token and the watch of its Secret").isEqualTo(2);

    credentials.forget(glm);
    assertThat(credentials.size()).isEqualTo(2);
    credentials.forget(other);
    assertThat(credentials.size()).isZero();
  }
}

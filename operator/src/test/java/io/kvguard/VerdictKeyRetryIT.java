package io.kvguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.testkit.EmbeddedApiServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: one failed read of the verdict key used to leave a replica keyless for its life (no
 * record trusted, every pod re-probed after each restart, and nothing said it was not ready). Now
 * the replica asks again with a growing wait and is unready until it holds the key.
 */
class VerdictKeyRetryIT {
  private static final String NAMESPACE = "kvguard-system";
  private static final String SECRET = "kvguard-verdict-key";

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private VerdictKeySecret key;

  @BeforeEach
  void namespace() {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .create();
  }

  @AfterEach
  void close() {
    if (key != null) {
      key.close();
    }
    client.close();
    api.close();
  }

  /**
   * The API server refuses the first {@code failures} reads of the Secret with 403, as it does
   * while the chart's RoleBinding is not yet in its cache (fabric8 retries a 5xx itself; a 403 it
   * gives straight back).
   */
  private AtomicInteger failFirstReads(int failures) {
    AtomicInteger reads = new AtomicInteger();
    api.faults(
        request -> {
          boolean secretRead =
              request.getMethod().equals("GET")
                  && request.getPath().startsWith("/api/v1/namespaces/" + NAMESPACE + "/secrets");
          if (secretRead && reads.incrementAndGet() <= failures) {
            return new MockResponse()
                .setResponseCode(403)
                .setBody(
                    EmbeddedApiServer.status(
                        403, "Forbidden", "secrets \"" + SECRET + "\" is forbidden"));
          }
          return null;
        });
    return reads;
  }

  @Test
  void aReplicaWhoseFirstReadsFailGetsTheKeyLaterAndIsUnreadyUntilThen() {
    AtomicInteger reads = failFirstReads(2);

    key = VerdictKeySecret.load(client, NAMESPACE, SECRET);

    assertThat(key.holdsKey()).as("unready while keyless").isFalse();
    assertThat(key.signer().hasKey()).isFalse();
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(key.holdsKey()).isTrue());
    assertThat(reads.get()).isEqualTo(3);
    assertThat(client.secrets().inNamespace(NAMESPACE).withName(SECRET).get())
        .as("created once the API server answered")
        .isNotNull();
  }

  @Test
  void aReplicaWhoseReadSucceedsHoldsTheKeyAtOnceAndTwoReplicasShareIt() {
    key = VerdictKeySecret.load(client, NAMESPACE, SECRET);
    assertThat(key.holdsKey()).isTrue();
    try (VerdictKeySecret second = VerdictKeySecret.load(client, NAMESPACE, SECRET)) {
      assertThat(second.holdsKey()).isTrue();
      io.fabric8.kubernetes.api.model.Pod pod =
          new io.fabric8.kubernetes.api.model.PodBuilder()
              .withNewMetadata()
              .withUid("3f2c")
              .endMetadata()
              .build();
      io.kvguard.gate.VerdictRecord record =
          new io.kvguard.gate.VerdictRecord(
              "serve",
              "Verified",
              "PoolSufficient",
              null,
              null,
              2_040_000L,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null,
              null);
      assertThat(second.signer().verifies(pod, "glm", key.signer().sign(pod, "glm", record)))
          .isTrue();
    }
  }
}

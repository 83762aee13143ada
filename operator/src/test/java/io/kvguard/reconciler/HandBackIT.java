package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Deleting a ModelDeployment never hangs on its pods: when a namespace is deleted, the policy goes
 * together with the RoleBinding that lets kvguard write the pods and with the pods themselves, so
 * hand-back writes fail (403, 404) or would hit pods already terminating.
 */
class HandBackIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private void twoVerifiedPods() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    awaitGate("serve-1", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(h.labelled("serve-0")).isTrue();
              assertThat(h.labelled("serve-1")).isTrue();
              assertThat(h.status("glm").verified).isEqualTo("2/2");
            });
  }

  private List<EmbeddedApiServer.Request> writesTo(String pod) {
    return h.operatorRequests().stream()
        .filter(
            r ->
                r.method().equals("PATCH")
                    && r.path().matches(".*/pods/" + pod + "(/status)?([?].*)?"))
        .toList();
  }

  @Test
  void handBackWritesTheApiServerRefusesDoNotKeepTheFinalizer() {
    twoVerifiedPods();
    // The namespace is going: the RoleBinding is gone (403) and one pod already is (404).
    h.api.clearRequests();
    h.api.faults(
        request -> {
          if (!request.getMethod().equals("PATCH")) {
            return null;
          }
          if (request.getPath().contains("/pods/serve-0")) {
            return new MockResponse()
                .setResponseCode(403)
                .setBody(
                    EmbeddedApiServer.status(
                        403,
                        "Forbidden",
                        "pods \"serve-0\" is forbidden: User \"system:serviceaccount:kvguard-system:kvguard\" cannot patch"));
          }
          if (request.getPath().contains("/pods/serve-1")) {
            return new MockResponse()
                .setResponseCode(404)
                .setBody(EmbeddedApiServer.status(404, "NotFound", "pods \"serve-1\" not found"));
          }
          return null;
        });

    h.client.resource(h.get("glm")).delete();

    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(h.get("glm")).isNull());
    assertThat(writesTo("serve-0"))
        .as("the refused hand-back was tried")
        .isNotEmpty()
        .allSatisfy(r -> assertThat(r.status()).isEqualTo(403));
    // Said loudly: a warning event naming the pod. No counter is kept for the deleted policy (one
    // series per deleted policy, forever, issue 28 §2); kvguard_stranded_pods counts such pods in
    // namespaces that still hold a ModelDeployment (PolicyChurnIT), and this one holds none now.
    h.awaitWarning(Duration.ofSeconds(5), "HandBackFailed", "glm", "serve-0", "HTTP 403");
    assertThat(h.registry.scrape())
        .doesNotContain("during=\"handback\"")
        .doesNotContain("modeldeployment=\"glm\"");
    // The pod keeps the gate it had: nothing kvguard could not write is claimed as done.
    h.api.faults(null);
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolSufficient"));
  }

  @Test
  void terminatingPodsAreNeitherProbedNorWrittenNorHandedBack() {
    twoVerifiedPods();
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-1")
        .edit(
            pod -> {
              pod.getMetadata().setFinalizers(List.of("example.com/drain"));
              return pod;
            });
    h.api.clearRequests();

    // A rollout deletes serve-1; a finalizer of someone else's keeps it terminating.
    h.client.pods().inNamespace(OperatorHarness.NAMESPACE).withName("serve-1").delete();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").verified).isEqualTo("1/1");
              assertThat(h.status("glm").pods).extracting(p -> p.name).containsExactly("serve-0");
            });
    // Deleting the policy hands serve-0 back; serve-1 is left as it is.
    h.client.resource(h.get("glm")).delete();
    awaitGate("serve-0", "True", "PolicyRemoved");
    await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(h.get("glm")).isNull());

    assertThat(writesTo("serve-1")).isEmpty();
    assertThat(h.gate("serve-1"))
        .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolSufficient"));
  }
}

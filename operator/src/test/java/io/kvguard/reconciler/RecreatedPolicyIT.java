package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A ModelDeployment deleted and created again under its name (kubectl replace --force, a GitOps
 * tool recreating it) while a pass of the deleted one runs. JOSDK 5.2.3 keeps one state per name
 * (operator-framework/java-operator-sdk v5.2.3, operator-framework-core/src/main/java/io/
 * javaoperatorsdk/operator/processing/event/): the new policy's creation event only marks the
 * deletion's state ({@code ResourceState.markEventReceived}: {@code
 * ADDITIONAL_EVENT_PRESENT_AFTER_DELETE_EVENT}); the next pass is built from the cache with the
 * deletion flag still set ({@code EventProcessor.submitReconciliationExecution}), so it is handed
 * the new policy as deleted when the cache already holds it, or the deleted one when not; and once
 * that pass ends the name's state is dropped ({@code cleanupForDeletedEvent}) and with it the
 * creation event, while every later event that is not the policy's own (probe completions, pod
 * events) is dropped for want of state ({@code ResourceStateManager.getOrCreateOnResourceEvent}).
 * Either way the new policy's pods were left open by a hand-back, with nothing to shut them.
 */
class RecreatedPolicyIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final String STATUS_PATH = "/modeldeployments/glm/status";

  private ModelDeployment policy() {
    ModelDeployment md = h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE));
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(2);
    md.getSpec().setProbe(probe);
    return md;
  }

  /**
   * Deletes the policy "glm" so that its deletion's own pass is under way when this returns: the
   * hand-back is refused (403) until the finalizer goes; then the deletion's own pass (the watch's
   * DELETED event) tries again, and that write is answered three seconds late. The policy is gone
   * from the API server by then.
   */
  private void deleteWhileItsLastPassIsHeld() {
    AtomicBoolean finalizerGone = new AtomicBoolean();
    AtomicBoolean held = new AtomicBoolean();
    CountDownLatch lastPassUnderWay = new CountDownLatch(1);
    h.api.faults(
        request -> {
          String path = request.getPath().replaceFirst("[?].*$", "");
          if ("PATCH".equals(request.getMethod()) && path.endsWith("/modeldeployments/glm")) {
            finalizerGone.set(true);
            return null;
          }
          if (!"PATCH".equals(request.getMethod()) || !path.contains("/pods/")) {
            return null;
          }
          if (!finalizerGone.get()) {
            return forbidden();
          }
          if (held.compareAndSet(false, true)) {
            lastPassUnderWay.countDown();
            return forbidden().setBodyDelay(3, TimeUnit.SECONDS);
          }
          return null;
        });
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> lastPassUnderWay.getCount() == 0);
    assertThat(h.get("glm")).isNull();
  }

  @Test
  void aPolicyCreatedAgainWhileTheDeletedOnesPassRanNeverOpensAPodNoProbePassed() {
    // The incident's pool: never to be opened by an Enforce policy.
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280));
    h.pod("serve-0", SERVE, engine);
    // The first pass's status write is answered 409 three seconds late, as a real API server
    // answers it once the policy was recreated meanwhile (another UID, another resourceVersion):
    // JOSDK retries it on the policy its cache holds then, and the pass ends well.
    CountDownLatch passUnderWay = new CountDownLatch(1);
    AtomicBoolean held = new AtomicBoolean();
    h.api.faults(
        request ->
            "PATCH".equals(request.getMethod())
                    && request.getPath().contains(STATUS_PATH)
                    && held.compareAndSet(false, true)
                ? conflictLate(passUnderWay)
                : null);
    String first = h.create(policy()).getMetadata().getUid();
    await().atMost(Duration.ofSeconds(30)).until(() -> passUnderWay.getCount() == 0);

    // Its first pass wrote no pod (the probe was not back), so there is no finalizer: gone at once.
    assertThat(h.get("glm").getMetadata().getFinalizers()).isNullOrEmpty();
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    await().atMost(Duration.ofSeconds(5)).until(() -> h.get("glm") == null);
    String second = h.create(policy()).getMetadata().getUid();
    assertThat(second).isNotEqualTo(first);

    // The recreated policy shuts the pod, as a policy created on its own would.
    awaitGate("serve-0", "False", "PoolTooSmall");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo("0/1"));
    assertThat(h.labelled("serve-0")).isFalse();
    // And it goes on probing every period: its passes were not lost with the old policy's events.
    long hits = engine.totalHits();
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(() -> assertThat(engine.totalHits()).isGreaterThan(hits + 1));
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
  }

  @Test
  void aPolicyCreatedAgainWhileTheDeletionsLastPassRanIsReconciled() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(policy());
    awaitGate("serve-0", "True", "PoolSufficient");
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled("serve-0"));
    deleteWhileItsLastPassIsHeld();
    // Created again, asking for a window the pod's pool cannot hold: the pod must be shut.
    ModelDeployment stricter = policy();
    stricter.getSpec().setContextWindow(2 * 2_040_000L);
    h.create(stricter);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.status("glm").verified).isEqualTo("0/1");
            });
    assertThat(h.labelled("serve-0")).isFalse();
  }

  @Test
  void theDeletedPolicysPodsTheNewOneDoesNotSelectAreHandedBackOpen() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    // The pass that writes the pod writes the status next (0/1 to 1/1): that status write is
    // answered 409 three seconds late, so the deletion below arrives while the pass runs.
    AtomicBoolean podWritten = new AtomicBoolean();
    AtomicBoolean held = new AtomicBoolean();
    CountDownLatch passUnderWay = new CountDownLatch(1);
    h.api.faults(
        request -> {
          if (!"PATCH".equals(request.getMethod())) {
            return null;
          }
          if (request.getPath().contains("/pods/serve-0")) {
            podWritten.set(true);
            return null;
          }
          return request.getPath().contains(STATUS_PATH)
                  && podWritten.get()
                  && held.compareAndSet(false, true)
              ? conflictLate(passUnderWay)
              : null;
        });
    h.create(policy());
    await().atMost(Duration.ofSeconds(30)).until(() -> passUnderWay.getCount() == 0);
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

    // Its finalizer removed by hand, the policy goes at once; the one created again under its
    // name selects other pods. The deleted policy's pod is nobody's now: handed back open, as
    // its deletion's pass would have (HandBackIT), not let go shut as if a live policy had
    // stopped selecting it.
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .edit(
            md -> {
              md.getMetadata().setFinalizers(java.util.List.of());
              return md;
            });
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    await().atMost(Duration.ofSeconds(2)).until(() -> h.get("glm") == null);
    ModelDeployment elsewhere =
        h.modelDeployment(
            "glm", WINDOW, role("serve", Engine.SGLANG, Map.of("app", "glm", "role", "other")));
    h.create(elsewhere);

    awaitGate("serve-0", "True", "PolicyRemoved");

    // The label goes in the write after the condition's.

    await().atMost(Duration.ofSeconds(5)).until(() -> !h.labelled("serve-0"));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo("0/0"));
  }

  @Test
  void aPolicyCreatedAgainWithTheFinalizerAndDeletedWhileTheDeletionsPassRanIsLetGo() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(policy());
    awaitGate("serve-0", "True", "PoolSufficient");
    deleteWhileItsLastPassIsHeld();
    // Created again from a manifest read off the cluster (kubectl get -o yaml, then kubectl
    // replace --force): it carries kvguard's finalizer. Deleted again at once (a GitOps prune, the
    // namespace going), it waits on kvguard to let it go: both its events came while the deletion's
    // pass ran, and went with that deletion's state.
    ModelDeployment exported = policy();
    exported.getMetadata().setFinalizers(java.util.List.of(PolicyFinalizer.NAME));
    h.create(exported);
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    assertThat(h.get("glm").isMarkedForDeletion()).isTrue();

    await().atMost(Duration.ofSeconds(15)).until(() -> h.get("glm") == null);
  }

  private static MockResponse forbidden() {
    return new MockResponse()
        .setResponseCode(403)
        .setBody(EmbeddedApiServer.status(403, "Forbidden", "pods is forbidden"));
  }

  private static MockResponse conflictLate(CountDownLatch passUnderWay) {
    passUnderWay.countDown();
    return new MockResponse()
        .setResponseCode(409)
        .setBody(
            EmbeddedApiServer.status(
                409, "Conflict", "the object has been modified; please apply your changes"))
        .setBodyDelay(3, TimeUnit.SECONDS);
  }
}

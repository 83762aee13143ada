package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.api.model.Event;
import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The pod-side gate through a pod's life: ranks, restarts, opt-outs, audit, deletion, label-only
 * pods, secrets.
 */
class GateLifecycleIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeEach
  void captureLogs() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(ch.qos.logback.classic.Level.DEBUG);
    // logback.xml pins io.kvguard at INFO: "never in the logs" must cover its DEBUG lines too.
    ((Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(ch.qos.logback.classic.Level.DEBUG);
    logs.start();
    root.addAppender(logs);
  }

  @AfterEach
  void releaseLogs() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
        .setLevel(ch.qos.logback.classic.Level.WARN);
    ((Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(ch.qos.logback.classic.Level.INFO);
  }

  private ModelDeployment serving(RoleSpec role) {
    return h.modelDeployment("glm", WINDOW, role);
  }

  /**
   * A probe timeout well past the fake engines' slow answers, so a slow answer is an answer, not a
   * failure.
   */
  private static void waitForSlowAnswers(ModelDeployment md) {
    io.kvguard.customresource.ProbeSpec patient = new io.kvguard.customresource.ProbeSpec();
    patient.setTimeoutSeconds(15);
    md.getSpec().setProbe(patient);
  }

  @Test
  void oneSmallDataParallelRankRefusesThePodEvenWhenRankZeroIsLarge() {
    h.pod(
        "serve-0",
        SERVE,
        h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 4_000_000, 700_000, 4_000_000)));
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));

    awaitGate("serve-0", "False", "PoolTooSmall");
    assertThat(h.gate("serve-0").orElseThrow().getMessage()).contains("KV pool 700000 tokens");
    await()
        .untilAsserted(
            () -> {
              assertThat(h.status("glm")).isNotNull();
              assertThat(h.status("glm").pods.get(0).poolTokens).isEqualTo(700_000);
              assertThat(h.status("glm").roles.get(0).smallestPoolTokens).isEqualTo(700_000);
            });
  }

  @Test
  void vllmIsJudgedByKvCacheSizeTokensNotByBlocksTimesBlockSize() {
    // 40,000 blocks x 64 = 2,560,000 would pass; the hybrid-aware figure of 900,000 does not.
    h.pod("serve-0", SERVE, h.engine(EngineShapes.vllm(WINDOW, 40_000, 64, 900_000L)));
    h.create(serving(role("serve", Engine.VLLM, SERVE)));

    awaitGate("serve-0", "False", "PoolTooSmall");
    assertThat(h.gate("serve-0").orElseThrow().getMessage()).contains("KV pool 900000 tokens");
  }

  @Test
  void aRestartedEngineIsGatedShutBeforeItsReprobeFinishesThenRefused() {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, engine);
    ModelDeployment md = serving(role("serve", Engine.SGLANG, SERVE));
    waitForSlowAnswers(md);
    h.create(md);
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());

    // The new process has a smaller pool, and its first answer takes 6 s: the gate must not wait
    // for it.
    Map<String, FakeEngine.Answer> smaller =
        new java.util.HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 500_000));
    smaller.put("/server_info", smaller.get("/server_info").delayedBy(6_000));
    engine.serve(smaller);
    h.pods.restartEngine(OperatorHarness.NAMESPACE, "serve-0");

    await()
        .atMost(Duration.ofMillis(5_000))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("AwaitingProbe");
                      });
              assertThat(h.labelled("serve-0")).isFalse();
            });
    awaitGate("serve-0", "False", "PoolTooSmall");
    // Open, shut, refused: every gate write was one PATCH planned against the cached pod, never a
    // read first (a read per write would double the API requests of every transition). The one read
    // allowed is the re-read after a fenced PATCH lost to the kubelet's own write (422 on the
    // resourceVersion test): the restart above races the shutting write, and re-reading then is
    // what keeps a stale decision from landing.
    List<EmbeddedApiServer.Request> podRequests =
        h.operatorRequests().stream()
            .filter(r -> r.path().split("\\?")[0].matches(".*/pods/serve-0(/status)?"))
            .toList();
    assertThat(podRequests.stream().filter(r -> r.method().equals("PATCH")).count())
        .isGreaterThanOrEqualTo(4);
    for (int i = 0; i < podRequests.size(); i++) {
      EmbeddedApiServer.Request request = podRequests.get(i);
      if (request.method().equals("PATCH")) {
        continue;
      }
      assertThat(request.method()).as("request %d of %s", i, podRequests).isEqualTo("GET");
      assertThat(i).as("a read with no write before it: %s", podRequests).isPositive();
      EmbeddedApiServer.Request before = podRequests.get(i - 1);
      assertThat(before.method() + " " + before.status())
          .as("a read only after a write that lost a conflict: %s", podRequests)
          .isIn("PATCH 409", "PATCH 422");
    }
  }

  @Test
  void anEngineContextAboveItsPoolIsRefusedUnlessTheRoleOptsOut() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(2_097_152, null, "0.5.22", 1_200_000)));
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "EngineContextExceedsPool");
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("engine context 2097152 tokens > KV pool 1200000 tokens")
        .contains("--context-length");
    await()
        .untilAsserted(
            () ->
                assertThat(h.events())
                    .extracting(Event::getReason)
                    .contains("EngineContextExceedsPool"));

    h.editSpec("glm", spec -> spec.getRoles().get(0).setAllowEngineContextAbovePool(true));
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").roles.get(0).notes)
                    .anyMatch(n -> n.contains("allowEngineContextAbovePool")));
  }

  @Test
  void auditModeOpensEveryGateAndStillReportsTheViolation() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    ModelDeployment md = serving(role("serve", Engine.SGLANG, SERVE));
    md.getSpec().setEnforcement(Enforcement.Audit);
    h.create(md);

    // Audit opens the gate even while the probe is pending; the message then carries the verdict.
    awaitGate("serve-0", "True", "Audit");
    await()
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0").orElseThrow().getMessage())
                    .contains("PoolTooSmall")
                    .contains("681280"));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());
    await()
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").pods.get(0).reason).isEqualTo("PoolTooSmall");
              assertThat(h.events()).extracting(Event::getReason).contains("PoolTooSmall");
            });
  }

  @Test
  void deletingTheModelDeploymentHandsItsPodsBackOpenWithoutTheLabel() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");
    awaitGate("serve-1", "True", "PoolSufficient");
    await()
        .untilAsserted(() -> assertThat(h.get("glm").getMetadata().getFinalizers()).isNotEmpty());
    // serve-1 carries the label before the deletion, so its removal below is a change, not a given.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-1")).isTrue());

    h.client.resource(h.get("glm")).delete();

    awaitGate("serve-0", "True", "PolicyRemoved");
    awaitGate("serve-1", "True", "PolicyRemoved");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-1")).isFalse());
    await().untilAsserted(() -> assertThat(h.get("glm")).isNull());
  }

  @Test
  void aNewPolicyCarriesNoFinalizerUntilItWritesAPodAndCanBeDeletedAtOnceBeforeThat() {
    // The first answer takes 4 s: until then kvguard has written nothing to the pod.
    Map<String, FakeEngine.Answer> slow =
        new java.util.HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    slow.put("/server_info", slow.get("/server_info").delayedBy(4_000));
    h.pod("serve-0", SERVE, h.engine(slow));
    ModelDeployment md = serving(role("serve", Engine.SGLANG, SERVE));
    waitForSlowAnswers(md);
    h.create(md);
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").pods)
                    .extracting(p -> p.reason)
                    .containsExactly("AwaitingProbe"));
    assertThat(h.get("glm").getMetadata().getFinalizers())
        .as("nothing written to a pod yet")
        .isEmpty();
    assertThat(h.gate("serve-0")).isEmpty();

    h.client.resource(h.get("glm")).delete();

    // Nothing to wait for: the policy goes at once, and the pod is still handed back open.
    await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(h.get("glm")).isNull());
    awaitGate("serve-0", "True", "PolicyRemoved");
    // The label goes in the write after the condition's.
    await().atMost(Duration.ofSeconds(5)).until(() -> !h.labelled("serve-0"));
  }

  @Test
  void aPolicyWhoseFinalizerWasRemovedByHandStillHandsItsPodsBackWhenDeleted() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280)));
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");
    await()
        .untilAsserted(() -> assertThat(h.get("glm").getMetadata().getFinalizers()).isNotEmpty());

    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]");
    await().untilAsserted(() -> assertThat(h.get("glm").getMetadata().getFinalizers()).isEmpty());
    h.client.resource(h.get("glm")).delete();

    await().untilAsserted(() -> assertThat(h.get("glm")).isNull());
    awaitGate("serve-0", "True", "PolicyRemoved");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
  }

  @Test
  void aPodWithoutTheReadinessGateIsGatedByLabelOnlyAndTheStatusSaysSo() {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pods.createRunning(OperatorHarness.NAMESPACE, "serve-0", SERVE, engine.port(), false);
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());
    await()
        .untilAsserted(
            () -> {
              var pod = h.status("glm").pods.get(0);
              assertThat(pod.gating).isEqualTo("LabelOnly");
              assertThat(pod.notes)
                  .anyMatch(n -> n.contains("gated by label kvguard.io/verified only"));
            });
  }

  @Test
  void theEnginesApiKeyNeverReachesStatusEventsOrLogs() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 681_280)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(serving(role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "False", "PoolTooSmall");
    awaitGate("serve-1", "True", "PoolSufficient");
    await().untilAsserted(() -> assertThat(h.events()).hasSizeGreaterThanOrEqualTo(2));

    String status = h.client.getKubernetesSerialization().asJson(h.get("glm"));
    String events = h.client.getKubernetesSerialization().asJson(h.events());
    String pods =
        h.client
            .getKubernetesSerialization()
            .asJson(h.client.pods().inNamespace(OperatorHarness.NAMESPACE).list());
    String logged =
        String.join("\n", logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
    assertThat(logged).contains("verdict modeldeployment=inference/glm");
    for (String written : new String[] {status, events, pods, logged}) {
      assertThat(written).doesNotContain(EngineShapes.SECRET_API_KEY).doesNotContain("api_key");
    }
  }
}

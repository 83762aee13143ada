package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: kvguard probes only what a tenant could reach itself, and only what is still selected
 * when sent.
 */
class ProbeTargetsIT {
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private OperatorHarness h;

  @AfterEach
  void stop() {
    h.close();
  }

  @Test
  void aHostNetworkPodIsNeverProbedAndItsGateSaysWhy() {
    h = new OperatorHarness().start();
    FakeEngine engine = h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000));
    Pod pod = h.pod("node-0", SERVE, engine);
    // The kubelet's view of a hostNetwork pod: its IP is the node's (here loopback, where the
    // engine listens).
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("node-0")
        .edit(p -> new PodBuilder(p).editSpec().withHostNetwork(true).endSpec().build());
    assertThat(pod.getStatus().getPodIP()).isEqualTo("127.0.0.1");
    h.create(h.modelDeployment("glm", 1_048_576, role("serve", Engine.SGLANG, SERVE)));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("node-0"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("False");
                          assertThat(c.getReason()).isEqualTo("ProbeFailed");
                          assertThat(c.getMessage())
                              .contains("pod uses hostNetwork: its IP is the node's");
                        }));
    assertThat(engine.totalHits()).as("requests the node's address received").isZero();
  }

  @Test
  void aQueuedProbeOfAPodNoLongerSelectedIsNeverSent() {
    // One probe thread: a hanging engine holds it for 3 s while the second pod's probe waits its
    // turn.
    KvguardConfig production = OperatorHarness.productionConfig();
    h =
        new OperatorHarness()
            .start(
                new KvguardConfig(
                    Set.of(),
                    0,
                    true,
                    production.leaseNamespace(),
                    1,
                    production.probeMaxBodyBytes(),
                    production.identity()));
    FakeEngine hanging =
        h.engine(Map.of("/server_info", FakeEngine.Answer.json("{}").delayedBy(30_000)));
    h.pod("hang-0", Map.of("app", "hang"), hanging);
    ModelDeployment slow =
        h.modelDeployment("slow", 1_048_576, role("serve", Engine.SGLANG, Map.of("app", "hang")));
    ProbeSpec probe = new ProbeSpec();
    probe.setTimeoutSeconds(3);
    slow.getSpec().setProbe(probe);
    h.create(slow);
    await().atMost(Duration.ofSeconds(10)).until(() -> hanging.hits("/server_info") == 1);

    FakeEngine queued = h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, queued);
    h.create(h.modelDeployment("glm", 1_048_576, role("serve", Engine.SGLANG, SERVE)));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> h.status("glm").pods != null && !h.status("glm").pods.isEmpty());
    // While its probe waits, the pod leaves the policy.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            p ->
                new PodBuilder(p).editMetadata().addToLabels("app", "moved").endMetadata().build());

    await().atMost(Duration.ofSeconds(15)).until(() -> h.gate("hang-0").isPresent());
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> queued.totalHits() == 0);
  }
}

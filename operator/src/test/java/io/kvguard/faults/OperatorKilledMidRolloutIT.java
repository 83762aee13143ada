package io.kvguard.faults;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The operator is stopped in the middle of a rollout, with a probe in flight, and the world moves
 * on while it is down: an engine container restarts, a new pod appears. The restarted operator
 * opens nothing it has not verified for the current container, and closes a gate whose container
 * changed before re-opening it.
 */
class OperatorKilledMidRolloutIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private final OperatorHarness h = new OperatorHarness();

  @AfterEach
  void stop() {
    h.close();
  }

  private Optional<PodVerdictStatus> recorded(String pod) {
    if (h.status("glm") == null) {
      return Optional.empty();
    }
    return h.status("glm").pods.stream().filter(p -> p.name.equals(pod)).findFirst();
  }

  private static String engineContainerId(io.fabric8.kubernetes.api.model.Pod pod) {
    return pod.getStatus().getContainerStatuses().stream()
        .filter(s -> s.getName().equals("engine"))
        .findFirst()
        .orElseThrow()
        .getContainerID();
  }

  private boolean shut(String pod) {
    return h.gate(pod).map(c -> !"True".equals(c.getStatus())).orElse(true) && !h.labelled(pod);
  }

  @Test
  void aRestartedOperatorOpensNothingUnverifiedAndRechecksContainersThatChangedWhileItWasDown() {
    h.start();
    FakeEngine first = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, first);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));

    // Rollout: a pod whose engine answers slowly, with a pool too small. Stop the operator
    // mid-probe.
    Map<String, FakeEngine.Answer> slowSmall =
        new java.util.LinkedHashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000));
    slowSmall.put("/server_info", slowSmall.get("/server_info").delayedBy(3_000));
    FakeEngine slow = h.engine(slowSmall);
    LatePods.add(h, "serve-1", SERVE, slow);
    await().atMost(Duration.ofSeconds(20)).until(() -> slow.hits("/server_info") >= 1);
    h.stopOperator();

    // While it is down: serve-0's engine restarts, and a new, healthy pod appears.
    long firstProbes = first.hits("/server_info");
    String restartedContainer =
        engineContainerId(h.pods.restartEngine(OperatorHarness.NAMESPACE, "serve-0"));
    FakeEngine third = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-2", SERVE, third);
    h.api.clearRequests();
    // Every state serve-0's gate goes through once the operator is back, in order.
    java.util.List<String> serve0States = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.fabric8.kubernetes.client.Watch serve0Watch =
        h.client
            .pods()
            .inNamespace(OperatorHarness.NAMESPACE)
            .withName("serve-0")
            .watch(
                new io.fabric8.kubernetes.client.Watcher<io.fabric8.kubernetes.api.model.Pod>() {
                  @Override
                  public void eventReceived(
                      Action action, io.fabric8.kubernetes.api.model.Pod pod) {
                    pod.getStatus().getConditions().stream()
                        .filter(c -> c.getType().equals("kvguard.io/pool-verified"))
                        .findFirst()
                        .map(c -> c.getStatus())
                        .ifPresent(
                            status -> {
                              if (serve0States.isEmpty()
                                  || !serve0States.get(serve0States.size() - 1).equals(status)) {
                                serve0States.add(status);
                              }
                            });
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
                });
    h.start();

    // serve-1 is never opened; serve-2 opens only once probed; serve-0 is re-probed for its new
    // container.
    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(shut("serve-1")).isTrue());
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-1"))
                  .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolTooSmall"));
              assertThat(h.gate("serve-2"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(third.hits("/server_info")).isPositive();
              assertThat(recorded("serve-0"))
                  .hasValueSatisfying(
                      p -> {
                        assertThat(p.containerID).isEqualTo(restartedContainer);
                        assertThat(p.reason).isEqualTo("PoolSufficient");
                      });
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            });
    assertThat(first.hits("/server_info"))
        .as("serve-0 re-probed for its new container")
        .isGreaterThan(firstProbes);
    // The gate of the restarted container was shut before it was opened again.
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(serve0States)
                    .as("serve-0's gate states")
                    .containsSubsequence("False", "True"));
    serve0Watch.close();
  }
}

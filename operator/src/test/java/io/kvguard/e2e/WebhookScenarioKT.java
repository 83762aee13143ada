package io.kvguard.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.FakeEngineOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The readiness-gate webhook on a real cluster (issue 18 §1): a Deployment whose pod template
 * declares no gate, in a namespace labelled {@code kvguard.io/readiness-gate-injection=enabled},
 * gets pods that carry the gate and stay NotReady, though their own readiness probe passes, until
 * kvguard verified their pool. Needs kvguard installed by the chart with the webhook on (its
 * default): {@code -Dkvguard.e2e.operator=deployed}; an operator in the test JVM cannot be called
 * by the API server.
 */
class WebhookScenarioKT {
  private RealClusterDriver cluster;

  @BeforeEach
  void start() throws Exception {
    Assumptions.assumeTrue(
        RealClusterDriver.Settings.configured(), RealClusterDriver.NOT_CONFIGURED);
    RealClusterDriver.Settings settings = RealClusterDriver.Settings.fromSystemProperties();
    Assumptions.assumeFalse(
        settings.localOperator(),
        "the webhook scenario needs -Dkvguard.e2e.operator=deployed"
            + " (kvguard installed by helm/kvguard with webhook.enabled=true): the API server cannot call a webhook"
            + " in the test JVM");
    cluster = new RealClusterDriver(settings);
    cluster.labelNamespace("kvguard.io/readiness-gate-injection", "enabled");
  }

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aDeploymentWithoutTheGateGetsItAndStaysNotReadyUntilVerified() {
    // The policy exists before the pods: the webhook answers from the operator's cache.
    cluster.create(
        AbstractGateScenarios.modelDeployment(
            "webhook", AbstractGateScenarios.role("serve", "webhook")));
    awaitPolicyCached();
    Map<String, String> labels = AbstractGateScenarios.labels("webhook", "serve");
    FakeEngineOptions small =
        FakeEngineOptions.sglang(
            AbstractGateScenarios.INCIDENT_POOL, 2, AbstractGateScenarios.WINDOW, null);

    Pod pod = cluster.createEngineDeployment("webhook-serve", labels, small);
    String name = pod.getMetadata().getName();

    assertThat(pod.getSpec().getReadinessGates())
        .extracting(PodReadinessGate::getConditionType)
        .containsExactly(GateNames.CONDITION_TYPE);
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () ->
                assertThat(cluster.gate(name))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False")));
    // Its engine runs and answers, yet the kubelet keeps it NotReady: the gate the webhook added
    // holds it.
    await()
        .during(Duration.ofSeconds(10))
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(cluster.podReady(name)).hasValue("False"));

    cluster.restartEngine(name, small.withPool(AbstractGateScenarios.FIXED_POOL));

    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              assertThat(cluster.gate(name))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(cluster.podReady(name)).hasValue("True");
            });
  }

  @Test
  void podsNoEnforceModePolicySelectsAreLeftAsTheyAre() {
    Pod pod =
        cluster.createEngineDeployment(
            "unguarded",
            AbstractGateScenarios.labels("unguarded", "serve"),
            FakeEngineOptions.sglang(
                AbstractGateScenarios.AMPLE_POOL, 2, AbstractGateScenarios.WINDOW, null));

    assertThat(pod.getSpec().getReadinessGates()).isNullOrEmpty();
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> assertThat(cluster.podReady(pod.getMetadata().getName())).hasValue("True"));
  }

  /**
   * The deployed operator's informer sees the new policy within a moment; its status is the sign.
   */
  private void awaitPolicyCached() {
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> assertThat(cluster.modelDeployment("webhook").getStatus()).isNotNull());
  }
}

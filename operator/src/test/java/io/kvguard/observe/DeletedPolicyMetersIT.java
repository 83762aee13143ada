package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testkit.EmbeddedApiServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §2, "a deleted policy leaves no meters behind", when passes and the deletion interleave
 * as they did in PolicyChurnIT on a loaded machine: a pass that was under way when its policy was
 * deleted finishes after the deletion was handled, or fails on the deletion (its status write
 * answers 404) and no pass ever sees the deletion itself.
 */
class DeletedPolicyMetersIT {
  private static final String NAMESPACE = "inference";
  private static final EventRecorderSettings QUICK =
      new EventRecorderSettings(
          25, Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofSeconds(1), 3);

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final KvguardMetrics metrics = new KvguardMetrics(registry);
  private final Observer observer =
      new Observer(
          new EventRecorder(
              EventRecorder.clientWithoutRetries(client),
              metrics,
              Clock.systemUTC(),
              "kvguard-test-0",
              QUICK),
          metrics);

  DeletedPolicyMetersIT() {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .create();
  }

  @AfterEach
  void stop() {
    observer.close();
    client.close();
    api.close();
  }

  private static ModelDeployment policy(String name, String uid) {
    RoleSpec role = new RoleSpec();
    role.setName("serve");
    role.setEngine(Engine.SGLANG);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(role));
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(name);
    md.getMetadata().setNamespace(NAMESPACE);
    md.getMetadata().setUid(uid);
    md.setSpec(spec);
    return md;
  }

  /**
   * What the failed pass of PolicyChurnIT reported: serve-0 verified (a transition, so an Event),
   * the pod without the readiness gate, and the finalizer write refused (404, the policy gone).
   */
  private static PassReport verifiedButWriteFailed(ModelDeployment md) {
    PodVerdictStatus entry = new PodVerdictStatus();
    entry.name = "serve-0";
    entry.role = "serve";
    entry.verdict = "Verified";
    entry.reason = "PoolSufficient";
    entry.message = "KV pool 2040000 tokens >= context window 1048576 × 1.0";
    entry.poolTokens = 2_040_000L;
    entry.gating = "LabelOnly";
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("serve-0")
            .withNamespace(NAMESPACE)
            .endMetadata()
            .build();
    return new PassReport(
        md,
        Map.of(),
        List.of(entry),
        List.of(new PassReport.PodFigures("serve", "serve-0", 2_040_000, true)),
        List.of(),
        List.of(),
        List.of(new PassReport.WriteFailure(pod, new IllegalStateException("404 Not Found"))),
        List.of());
  }

  /** The series Prometheus would scrape for one ModelDeployment, values left out. */
  private List<String> seriesOf(String name) {
    return Arrays.stream(registry.scrape().split("\n"))
        .filter(line -> line.startsWith("kvguard_"))
        .filter(line -> line.contains("modeldeployment=\"" + name + "\""))
        .map(line -> line.substring(0, line.lastIndexOf(' ')))
        .sorted()
        .toList();
  }

  private int events() {
    return client.v1().events().inNamespace(NAMESPACE).list().getItems().size();
  }

  @Test
  void aPassThatFinishesAfterTheDeletionWasHandledWritesNoEventAndRecordsNoMeter() {
    ModelDeployment churn = policy("churn-8", "00000000-0000-0000-0000-000000000008");
    observer.passStarting(churn);
    observer.policyGone(churn, List.of());

    // The pass that was under way reports now: its verdicts are new to the forgotten policy.
    observer.report(verifiedButWriteFailed(churn));

    await()
        .during(Duration.ofMillis(1500))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(seriesOf("churn-8")).isEmpty();
              assertThat(events()).isZero();
            });
  }

  @Test
  void aPolicyWhoseDeletionNoPassSawLosesItsMetersOnceTheCacheNoLongerHoldsIt() {
    ModelDeployment churn = policy("churn-8", "00000000-0000-0000-0000-000000000008");
    ModelDeployment keeper = policy("keeper", "00000000-0000-0000-0000-00000000000a");
    observer.passStarting(churn);
    observer.passStarting(keeper);
    observer.report(verifiedButWriteFailed(churn));
    observer.report(verifiedButWriteFailed(keeper));
    await()
        .untilAsserted(
            () ->
                assertThat(seriesOf("churn-8"))
                    .contains(
                        "kvguard_context_window_tokens{modeldeployment=\"churn-8\",namespace=\"inference\"}",
                        "kvguard_event_writes_total{modeldeployment=\"churn-8\",namespace=\"inference\",outcome=\"created\"}",
                        "kvguard_gate_write_failures_total{during=\"pass\",modeldeployment=\"churn-8\",namespace=\"inference\"}"));
    List<String> keeperSeries = seriesOf("keeper");

    // churn-8 was deleted and its last pass failed on it: policyGone never comes. The cache holds
    // keeper only.
    observer.forgetPoliciesNotCached(
        (namespace, name) -> name.equals("keeper") ? keeper.getMetadata().getUid() : null);
    observer.report(verifiedButWriteFailed(churn));

    await()
        .during(Duration.ofMillis(1500))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(seriesOf("churn-8")).isEmpty();
              assertThat(seriesOf("keeper")).isEqualTo(keeperSeries);
            });
  }

  @Test
  void aPolicyRecreatedUnderTheSameNameKeepsItsMetersWhenTheOldOneIsSwept() {
    ModelDeployment old = policy("glm", "00000000-0000-0000-0000-000000000001");
    ModelDeployment recreated = policy("glm", "00000000-0000-0000-0000-000000000002");
    observer.passStarting(old);
    observer.passStarting(recreated);
    observer.report(verifiedButWriteFailed(recreated));
    await()
        .until(() -> seriesOf("glm").stream().anyMatch(s -> s.startsWith("kvguard_event_writes")));
    List<String> before = seriesOf("glm");

    observer.forgetPoliciesNotCached((namespace, name) -> recreated.getMetadata().getUid());
    observer.report(verifiedButWriteFailed(old));

    assertThat(seriesOf("glm")).isEqualTo(before);
  }
}

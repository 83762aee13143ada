package io.kvguard.faults;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A {@code watchNamespaces} install where one namespace's RoleBinding is gone (the namespace was
 * deleted: its RoleBinding goes with it, and the chart's values still name it). Before, kvguard's
 * next start failed (JOSDK v5.2.3 fails {@code Operator.start} when one namespace's informer cannot
 * list), so it exited and restarted for ever, and no namespace was guarded: a restarted engine
 * container kept the open gate of the one before it.
 */
class UnreadableWatchedNamespaceIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final String RETIRED = "retired";
  private static final String VALUES =
      "watchNamespaces: [" + OperatorHarness.NAMESPACE + ", " + RETIRED + "]";

  private final AtomicInteger steppedDown = new AtomicInteger();
  private final OperatorHarness h = new OperatorHarness().rbacValues(VALUES);

  @AfterEach
  void stop() {
    h.close();
  }

  private static KvguardConfig watching(Set<String> namespaces) {
    KvguardConfig production = OperatorHarness.productionConfig();
    return new KvguardConfig(
        namespaces,
        production.metricsPort(),
        true,
        production.leaseNamespace(),
        production.probeConcurrency(),
        production.probeMaxBodyBytes(),
        production.identity());
  }

  /** Every request of the operator to a namespace answers 403 while {@code refusing} holds. */
  private void refuse(Set<String> namespaces, AtomicBoolean refusing) {
    h.api.faults(
        (RecordedRequest r) -> {
          if (!refusing.get()
              || !OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))
              || namespaces.stream()
                  .noneMatch(n -> r.getPath().contains("/namespaces/" + n + "/"))) {
            return null;
          }
          return new MockResponse()
              .setResponseCode(403)
              .setBody(
                  io.kvguard.testkit.EmbeddedApiServer.status(
                      403, "Forbidden", "the namespace's RoleBinding is gone"));
        });
  }

  private ModelDeployment retiredPolicy() {
    ModelDeployment md = OperatorHarness.policy("old", WINDOW, role("serve", Engine.SGLANG, SERVE));
    md.getMetadata().setNamespace(RETIRED);
    return h.client.resources(ModelDeployment.class).inNamespace(RETIRED).resource(md).create();
  }

  @Test
  void aWatchedNamespaceKvguardMayNoLongerReadDoesNotStopItGuardingTheOthers() {
    retiredPolicy();
    AtomicBoolean refusing = new AtomicBoolean(true);
    refuse(Set.of(RETIRED), refusing);
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));

    h.start(config, steppedDown::incrementAndGet);
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));

    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
    assertThat(h.registry.scrape())
        .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0")
        .doesNotContain("kvguard_unwatched_namespaces{namespace=\"inference\"");
    assertThat(steppedDown).hasValue(0);

    // The RoleBinding is back: the replica steps down (production: exits) to watch it.
    refusing.set(false);
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(steppedDown).hasValue(1));
    assertThat(h.registry.scrape()).doesNotContain("kvguard_unwatched_namespaces");
    h.stopOperator();
    h.start(config, steppedDown::incrementAndGet);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(retiredStatus()).isNotNull());
  }

  /**
   * The RoleBinding goes while kvguard runs. Its ModelDeployment watch of the namespace, once
   * dropped, is refused for ever (fabric8 retries it), JOSDK calls the replica unhealthy, and
   * {@code /readyz} fails on every replica: the readiness-gate webhook had no endpoint left for any
   * namespace. Now the replica steps down and its next start leaves the namespace out.
   */
  @Test
  void aWatchedNamespaceWhoseRoleBindingGoesWhileKvguardRunsIsLeftOutByTheNextStart() {
    retiredPolicy();
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));
    h.start(config, steppedDown::incrementAndGet);
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              assertThat(retiredStatus()).isNotNull();
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            });

    refuse(Set.of(RETIRED), new AtomicBoolean(true));
    // An open watch outlives its RBAC until it ends (the API server authorizes it when it opens).
    assertThat(
            h.api.closeWatches(
                r ->
                    r.getPath().contains("/namespaces/" + RETIRED + "/modeldeployments")
                        && OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))))
        .isEqualTo(1);
    await().atMost(Duration.ofSeconds(45)).untilAsserted(() -> assertThat(steppedDown).hasValue(1));

    h.stopOperator();
    h.start(config, steppedDown::incrementAndGet);
    assertThat(h.registry.scrape())
        .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0");
    await().atMost(Duration.ofSeconds(20)).until(() -> h.operator().healthy());
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
  }

  private Object retiredStatus() {
    return h.client
        .resources(ModelDeployment.class)
        .inNamespace(RETIRED)
        .withName("old")
        .get()
        .getStatus();
  }

  @Test
  void aReplicaThatMayReadNoneOfItsNamespacesFailsItsStartNamingThem() {
    refuse(Set.of(OperatorHarness.NAMESPACE, RETIRED), new AtomicBoolean(true));

    assertThatThrownBy(
            () ->
                h.start(
                    watching(Set.of(OperatorHarness.NAMESPACE, RETIRED)),
                    steppedDown::incrementAndGet))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("none of the namespaces")
        .hasMessageContaining("[" + OperatorHarness.NAMESPACE + ", " + RETIRED + "]");
  }
}

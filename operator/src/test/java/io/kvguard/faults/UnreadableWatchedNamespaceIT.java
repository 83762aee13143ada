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
    refuse(namespaces, refusing, r -> true);
  }

  /**
   * The operator's requests to a namespace that {@code which} picks answer 403 while {@code
   * refusing} holds.
   */
  private void refuse(
      Set<String> namespaces,
      AtomicBoolean refusing,
      java.util.function.Predicate<RecordedRequest> which) {
    h.api.faults(
        (RecordedRequest r) -> {
          if (!refusing.get()
              || !OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))
              || namespaces.stream().noneMatch(n -> r.getPath().contains("/namespaces/" + n + "/"))
              || !which.test(r)) {
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

  /** As below, and the retired namespace's ModelDeployment is reconciled: both are watched. */
  private void startWatchingBothNamespaces(KvguardConfig config) {
    startAndGateAPodOfTheOtherNamespace(config);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(retiredStatus("old")).isNotNull());
    await().atMost(Duration.ofSeconds(20)).until(() -> h.operator().healthy());
  }

  /**
   * Drops the operator's open watch of {@code resource} in the retired namespace (an open watch
   * outlives its RBAC until it ends: the API server authorizes it when it opens), so its reopening
   * meets the refusal; the replica turns unready, then ready again with the informer excused and
   * the namespace named, and nothing steps down.
   */
  private void dropTheRefusedWatchAndAwaitItExcused(String resource) {
    assertThat(
            h.api.closeWatches(
                r ->
                    r.getPath().contains("/namespaces/" + RETIRED + "/" + resource)
                        && OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))))
        .isEqualTo(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> !h.operator().healthy());
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              assertThat(h.operator().healthy()).isTrue();
              assertThat(h.registry.scrape())
                  .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0");
            });
    assertThat(steppedDown).hasValue(0);
  }

  /** Starts the operator, then a verified pod and its ModelDeployment in the test namespace. */
  private void startAndGateAPodOfTheOtherNamespace(KvguardConfig config) {
    h.start(config, steppedDown::incrementAndGet);
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
  }

  @Test
  void aWatchedNamespaceKvguardMayNoLongerReadDoesNotStopItGuardingTheOthers() {
    retiredPolicy();
    AtomicBoolean refusing = new AtomicBoolean(true);
    refuse(Set.of(RETIRED), refusing);
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));

    startAndGateAPodOfTheOtherNamespace(config);
    assertThat(h.registry.scrape())
        .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0")
        .doesNotContain("kvguard_unwatched_namespaces{namespace=\"inference\"");
    assertThat(steppedDown).hasValue(0);

    // The RoleBinding is back. No replica restarts for it (a tenant could time such restarts):
    // the namespace stays unwatched, and said to be, until the next start.
    refusing.set(false);
    awaitPastARecheckWithoutAStepDown();
    assertThat(h.registry.scrape())
        .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0");
    assertThat(retiredStatus("old")).isNull();
    h.stopOperator();
    h.start(config, steppedDown::incrementAndGet);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(retiredStatus("old")).isNotNull());
    assertThat(h.registry.scrape()).doesNotContain("kvguard_unwatched_namespaces");
  }

  /**
   * Waits past the next recheck ({@code WatchedNamespaces.RECHECK}, 15 s), asserting that nothing
   * stepped down meanwhile.
   */
  private void awaitPastARecheckWithoutAStepDown() {
    Duration past = Duration.ofSeconds(20);
    await()
        .during(past)
        .atMost(past.plusSeconds(5))
        .untilAsserted(() -> assertThat(steppedDown).hasValue(0));
  }

  /**
   * The RoleBinding goes while kvguard runs. Its ModelDeployment watch of the namespace, once
   * dropped, is refused for ever (fabric8 retries it) and JOSDK calls the replica unhealthy:
   * before, {@code /readyz} failed on every replica for good, and the readiness-gate webhook had no
   * endpoint left for any namespace. A step-down would end that, but would let a tenant who deletes
   * and re-creates a binding restart every replica at will. Now the namespace's informers no longer
   * count for the replica's health, the gauge names it, nothing steps down, and once the binding is
   * back the informer watches the namespace again by itself.
   */
  @Test
  void aWatchedNamespaceWhoseRoleBindingGoesWhileKvguardRunsDoesNotLeaveEveryReplicaUnready() {
    retiredPolicy();
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));
    startWatchingBothNamespaces(config);

    AtomicBoolean refusing = new AtomicBoolean(true);
    refuse(Set.of(RETIRED), refusing);
    dropTheRefusedWatchAndAwaitItExcused("modeldeployments");
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

    // The binding is back: fabric8 reopens the watch (after at most 32 s), the namespace is read.
    refusing.set(false);
    ModelDeployment later =
        OperatorHarness.policy("later", WINDOW, role("serve", Engine.SGLANG, SERVE));
    later.getMetadata().setNamespace(RETIRED);
    h.client.resources(ModelDeployment.class).inNamespace(RETIRED).resource(later).create();
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(retiredStatus("later")).isNotNull();
              assertThat(h.registry.scrape()).doesNotContain("kvguard_unwatched_namespaces");
            });
    assertThat(h.operator().healthy()).isTrue();
    assertThat(steppedDown).hasValue(0);
  }

  /**
   * As above, but what the namespace refuses is its pods, not its ModelDeployments: a namespace
   * admin can bring it about alone (delete kvguard's RoleBinding, bind kvguard's ServiceAccount to
   * a Role of their own granting ModelDeployments only, as for the refused WATCH below). The pod
   * informer of the namespace, once its watch drops, is refused for ever and stays registered
   * (PodCache replaces it only by one that lists), and JOSDK calls the replica unhealthy. Before
   * (review of fe93d53), only a refused ModelDeployment informer was excused, so {@code /readyz}
   * failed on every replica for good, as before 594c7c1.
   */
  @Test
  void aWatchedNamespaceWhosePodsAreRefusedWhileKvguardRunsDoesNotLeaveEveryReplicaUnready() {
    retiredPolicy();
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));
    startWatchingBothNamespaces(config);

    AtomicBoolean refusing = new AtomicBoolean(true);
    refuse(Set.of(RETIRED), refusing, r -> r.getPath().contains("/pods"));
    dropTheRefusedWatchAndAwaitItExcused("pods");

    // The pods may be read again: fabric8 reopens the watch by itself, and the series goes.
    refusing.set(false);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> assertThat(h.registry.scrape()).doesNotContain("kvguard_unwatched_namespaces"));
    assertThat(h.operator().healthy()).isTrue();
    assertThat(steppedDown).hasValue(0);
  }

  private Object retiredStatus(String name) {
    return h.client
        .resources(ModelDeployment.class)
        .inNamespace(RETIRED)
        .withName(name)
        .get()
        .getStatus();
  }

  /**
   * A namespace where kvguard may LIST ModelDeployments but not WATCH them: a namespace admin can
   * bring it about alone (delete kvguard's RoleBinding, bind kvguard's ServiceAccount to a Role of
   * their own that grants only {@code list}; RBAC's escalation check lets anyone grant what they
   * hold). JOSDK's informer lists and then opens a WATCH, and a refused WATCH before the first
   * success fails its start (fabric8 v7.5.2 {@code Reflector.onException}: the default handler
   * retries nothing until the start future is done) and so {@code Operator.start}. A check that
   * only lists let the namespace in, and every start failed for every namespace (the crash loop
   * {@code WatchedNamespaces} is there to end).
   */
  @Test
  void aWatchedNamespaceWhoseWatchIsRefusedDoesNotStopItGuardingTheOthers() {
    retiredPolicy();
    AtomicBoolean refusing = new AtomicBoolean(true);
    refuse(Set.of(RETIRED), refusing, r -> r.getPath().contains("watch=true"));
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));

    startAndGateAPodOfTheOtherNamespace(config);
    assertThat(h.registry.scrape())
        .contains("kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0");
    awaitPastARecheckWithoutAStepDown();
    await().atMost(Duration.ofSeconds(20)).until(() -> h.operator().healthy());

    refusing.set(false);
    h.stopOperator();
    h.start(config, steppedDown::incrementAndGet);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(retiredStatus("old")).isNotNull());
  }

  /**
   * Every watched namespace refused while kvguard runs (its cluster-wide RBAC changed): nothing is
   * guarded, so the replica must not read as ready, as a start in that state fails.
   */
  @Test
  void aReplicaWhoseEveryNamespaceIsRefusedWhileItRunsIsNotReady() {
    retiredPolicy();
    KvguardConfig config = watching(Set.of(OperatorHarness.NAMESPACE, RETIRED));
    startAndGateAPodOfTheOtherNamespace(config);
    await().atMost(Duration.ofSeconds(20)).until(() -> h.operator().healthy());

    refuse(Set.of(OperatorHarness.NAMESPACE, RETIRED), new AtomicBoolean(true));
    assertThat(
            h.api.closeWatches(
                r ->
                    r.getPath().contains("/modeldeployments")
                        && OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))))
        .isEqualTo(2);
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () ->
                assertThat(h.registry.scrape())
                    .contains(
                        "kvguard_unwatched_namespaces{namespace=\"" + RETIRED + "\"} 1.0",
                        "kvguard_unwatched_namespaces{namespace=\""
                            + OperatorHarness.NAMESPACE
                            + "\"} 1.0"));
    await()
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(10))
        .until(() -> !h.operator().healthy());
    assertThat(steppedDown).hasValue(0);
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

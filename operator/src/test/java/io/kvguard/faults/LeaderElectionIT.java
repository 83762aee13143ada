package io.kvguard.faults;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.kvguard.KvguardConfig;
import io.kvguard.KvguardOperator;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas on one API server, as the chart runs them with replicas: 2. The follower writes
 * nothing while the leader lives; when the leader stops, the follower takes the lease and keeps
 * every gate as it was. Writers are told apart by the reportingInstance of the events each replica
 * emits.
 */
class LeaderElectionIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final String LEADER = OperatorHarness.productionConfig().identity();
  private static final String FOLLOWER = "kvguard-test-1";
  private static final String FOLLOWER_AGENT = "kvguard-follower-under-test";
  private final OperatorHarness h = new OperatorHarness();
  private io.fabric8.kubernetes.client.KubernetesClient followerClient;
  private KvguardOperator follower;

  /** How often the follower stepped down (production: exit). */
  private final java.util.concurrent.atomic.AtomicInteger followerSteppedDown =
      new java.util.concurrent.atomic.AtomicInteger();

  @AfterEach
  void stop() {
    if (follower != null) {
      follower.close();
    }
    if (followerClient != null) {
      followerClient.close();
    }
    h.close();
  }

  private Optional<String> holder() {
    Lease lease =
        h.client
            .leases()
            .inNamespace(OperatorHarness.OPERATOR_NAMESPACE)
            .withName(KvguardConfig.LEASE_NAME)
            .get();
    return lease == null || lease.getSpec() == null
        ? Optional.empty()
        : Optional.ofNullable(lease.getSpec().getHolderIdentity());
  }

  private long eventsFrom(String instance) {
    return h.events().stream().filter(e -> instance.equals(e.getReportingInstance())).count();
  }

  private void awaitGate(String pod, String status) {
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () ->
                assertThat(h.gate(pod))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo(status)));
  }

  private long podWrites(java.util.Set<String> pods) {
    return h.api.requests().stream()
        .filter(
            r ->
                (r.method().equals("PATCH") || r.method().equals("PUT"))
                    && pods.stream()
                        .anyMatch(
                            pod ->
                                r.path().split("\\?")[0].matches(".*/pods/" + pod + "(/status)?")))
        .count();
  }

  /**
   * Writes (anything but GET) the follower's client sent, leases aside: its User-Agent tells them
   * apart.
   */
  private long followerWrites() {
    return h.api.requests().stream()
        .filter(
            r ->
                FOLLOWER_AGENT.equals(r.userAgent())
                    && !r.method().equals("GET")
                    && !r.path().contains("/leases")
                    && !r.path().contains("selfsubjectrulesreviews"))
        .count();
  }

  /**
   * A follower lists the pods of the namespaces with a ModelDeployment beside the lease it waits
   * for (issue 28 §5, PodCacheWarmUp), so it would take over from a warm cache, and stops caching a
   * namespace once its ModelDeployments are gone, though it runs no pass there.
   */
  @Test
  void aFollowerCachesPodsAheadAndDropsThemOnceTheirPoliciesAreGone() {
    h.start();
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True");
    await().atMost(Duration.ofSeconds(20)).until(() -> holder().equals(Optional.of(LEADER)));
    startFollower();
    String podSource = "pods-" + OperatorHarness.NAMESPACE;

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(followerEventSources())
                    .as("the follower caches the pods")
                    .contains(podSource));
    assertThat(holder()).contains(LEADER);

    h.client
        .resources(io.kvguard.customresource.ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(followerEventSources())
                    .as("the follower stopped caching a namespace with no ModelDeployment left")
                    .doesNotContain(podSource));
    assertThat(followerWrites()).as("the follower wrote nothing").isZero();
  }

  private java.util.Set<String> followerEventSources() {
    return follower.operator().getRegisteredControllers().stream()
        .flatMap(
            c ->
                ((io.javaoperatorsdk.operator.RegisteredController<?>) c)
                    .getControllerHealthInfo().eventSourceHealthIndicators().keySet().stream())
        .collect(java.util.stream.Collectors.toSet());
  }

  private void startFollower() {
    KvguardConfig production = OperatorHarness.productionConfig();
    KvguardConfig second =
        new KvguardConfig(
            production.namespaces(),
            production.metricsPort(),
            true,
            production.leaseNamespace(),
            production.probeConcurrency(),
            production.probeMaxBodyBytes(),
            FOLLOWER);
    followerClient =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder(
                        io.fabric8.kubernetes.client.Config.empty())
                    .withMasterUrl(h.api.url())
                    .withNamespace(OperatorHarness.NAMESPACE)
                    .withHttp2Disable(true)
                    .withUserAgent(FOLLOWER_AGENT)
                    .build())
            .build();
    follower =
        KvguardOperator.create(
            followerClient,
            second,
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            Clock.systemUTC(),
            followerSteppedDown::incrementAndGet);
    follower.start();
  }

  /** The follower has listed the pods of the namespace with a ModelDeployment (PodCacheWarmUp). */
  private void startFollowerWithPodsCached() {
    h.start();
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True");
    startFollower();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> followerEventSources().contains("pods-" + OperatorHarness.NAMESPACE));
  }

  /**
   * A replica whose informer stops for good after syncing sees no change of its objects any more:
   * it steps down as on a lost lease (production: exit from a thread of its own, Kubernetes
   * restarts it), not through JOSDK's System.exit on the informer's event loop. Asked here of the
   * handler the running operator holds (closing a client does not end a watch on the mock server,
   * so an informer cannot be made to stop for good on cue).
   */
  @Test
  void anInformerThatStopsForGoodStepsTheReplicaDownInsteadOfJosdksExit() {
    startFollowerWithPodsCached();
    var handler =
        follower.operator().getConfigurationService().getInformerStoppedHandler().orElseThrow();
    io.fabric8.kubernetes.client.informers.SharedIndexInformer<?> synced =
        io.kvguard.testing.FakeInformer.of("pods-" + OperatorHarness.NAMESPACE, true);

    handler.onStop(synced, new IllegalStateException("watch refused: 403"));
    assertThat(followerSteppedDown).hasValue(1);
    // Once the replica stops, an informer stopping is expected.
    follower.close();
    handler.onStop(synced, new IllegalStateException("Client is closed"));
    assertThat(followerSteppedDown).hasValue(1);
    follower = null;
  }

  /**
   * A replica that stops closes its client after the operator; an informer that was re-establishing
   * its watch then stops with "Client is closed". That is an orderly stop, not a failure: before,
   * JOSDK's handler called System.exit(1) (seen in the demo's test JVM).
   */
  @Test
  void aReplicaThatStopsDoesNotStepDownWhenItsInformersStopAfterIt() {
    startFollowerWithPodsCached();
    follower.close();
    followerClient.close();
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .until(() -> followerSteppedDown.get() == 0);
    follower = null;
  }

  @Test
  void onlyTheLeaderWritesAndFailoverKeepsTheGatesAsTheyAre() {
    h.start();
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True");
    awaitGate("serve-1", "False");
    await().atMost(Duration.ofSeconds(20)).until(() -> holder().equals(Optional.of(LEADER)));

    startFollower();

    // While the leader lives, a new pod is gated by the leader alone.
    LatePods.add(
        h, "serve-2", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    awaitGate("serve-2", "True");
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(holder()).contains(LEADER);
              assertThat(eventsFrom(FOLLOWER)).isZero();
              assertThat(followerWrites())
                  .as("the follower writes nothing while the leader lives")
                  .isZero();
            });
    assertThat(eventsFrom(LEADER)).isPositive();
    // The follower was there (its informers read under its own User-Agent), so "wrote nothing"
    // means something.
    assertThat(h.api.requests()).anyMatch(r -> FOLLOWER_AGENT.equals(r.userAgent()));

    h.api.clearRequests();
    h.stopOperator();
    await().atMost(Duration.ofSeconds(40)).until(() -> holder().equals(Optional.of(FOLLOWER)));
    // The new leader reads the recorded verdicts and leaves every gate where it was.
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(8))
        .untilAsserted(
            () -> {
              assertThat(h.gate("serve-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(h.gate("serve-2"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(h.gate("serve-1"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("False"));
              assertThat(h.labelled("serve-0")).isTrue();
            });

    // And it is the writer now: a new pod is gated, and the event says by whom.
    LatePods.add(
        h, "serve-3", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000)));
    awaitGate("serve-3", "False");
    // Checked once the new leader has surely acted (it gated serve-3): it wrote none of the pods it
    // inherited.
    assertThat(podWrites(java.util.Set.of("serve-0", "serve-1", "serve-2")))
        .as("failover writes no pod")
        .isZero();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.events())
                    .anySatisfy(
                        (Event e) -> {
                          assertThat(e.getReportingInstance()).isEqualTo(FOLLOWER);
                          assertThat(e.getMessage()).contains("serve-3");
                        }));
  }

  @Test
  void stoppingGivesTheLeaseUpQuietlyAndOnlyALeaseLostWhileRunningStepsDown() {
    KvguardConfig production = OperatorHarness.productionConfig();
    KvguardConfig config =
        new KvguardConfig(
            production.namespaces(),
            production.metricsPort(),
            true,
            production.leaseNamespace(),
            production.probeConcurrency(),
            production.probeMaxBodyBytes(),
            FOLLOWER);
    followerClient = h.api.client();
    java.util.concurrent.atomic.AtomicInteger stepDowns =
        new java.util.concurrent.atomic.AtomicInteger();

    // A replica stopped while leading (SIGTERM in a rollout) does not react to its own step-down.
    KvguardOperator first =
        KvguardOperator.create(
            followerClient,
            config,
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            Clock.systemUTC(),
            stepDowns::incrementAndGet);
    first.start();
    await().atMost(Duration.ofSeconds(20)).until(() -> holder().equals(Optional.of(FOLLOWER)));
    first.close();
    assertThat(stepDowns).hasValue(0);
    // And it hands the lease back: the next replica takes over within its retry period, not the
    // lease's 15 s.
    assertThat(holder()).isEmpty();
    KvguardConfig next =
        new KvguardConfig(
            config.namespaces(),
            config.metricsPort(),
            true,
            config.leaseNamespace(),
            config.probeConcurrency(),
            config.probeMaxBodyBytes(),
            "kvguard-test-2");
    follower =
        KvguardOperator.create(
            followerClient,
            next,
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            Clock.systemUTC(),
            stepDowns::incrementAndGet);
    follower.start();
    await()
        .atMost(Duration.ofSeconds(8))
        .until(() -> holder().equals(Optional.of("kvguard-test-2")));

    // One whose lease someone else takes while it runs steps down (production: exits, Kubernetes
    // restarts it).
    h.client
        .leases()
        .inNamespace(OperatorHarness.OPERATOR_NAMESPACE)
        .withName(KvguardConfig.LEASE_NAME)
        .edit(
            lease -> {
              lease.getSpec().setHolderIdentity("another-operator");
              lease.getSpec().setRenewTime(java.time.ZonedDateTime.now());
              lease.getSpec().setAcquireTime(java.time.ZonedDateTime.now());
              return lease;
            });
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(stepDowns).hasValue(1));
  }
}

package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 20's four attacks, each against the operator as the chart runs it: a JVM of its own with
 * the chart's {@code jvmOptions} (ExitOnOutOfMemoryError) and heap (-Xmx256m: MaxRAMPercentage 50
 * of the 512Mi limit), serving /metrics and /healthz as {@code OperatorMain} does. Each shows the
 * operator staying up, /healthz answering as the kubelet asks it (never three failures in a row,
 * the chart's liveness failureThreshold), no hostile gate opening, and an innocent tenant's new pod
 * verified within {@link #INNOCENT_WITHIN} while the attack runs. On the code before issue 20 the
 * first two end the JVM (OutOfMemoryError), the third keeps the innocent pod shut for minutes, and
 * the fourth stops /healthz.
 */
class HostileTenantsIT {
  /**
   * How long an innocent tenant's new pod may wait for its verdict during an attack. Unattacked it
   * takes about 0.2 s, attacked 0.2-3.1 s here (3.1 s with this machine's two cores oversubscribed
   * five times); before issue 20 the third attack kept it shut for minutes (until the hanging
   * probes' 261-300 s timeouts). 30 s, not 20: one CI run on 2026-12-04 passed 20 s in the third
   * attack, cause not found (the failure now says where the pod and its policy stood).
   */
  static final Duration INNOCENT_WITHIN = Duration.ofSeconds(30);

  private HostileTenants cluster;
  private HealthWatch health;

  @AfterEach
  void stop() {
    if (health != null) {
      health.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The operator JVM still runs; its exit code when not (ExitOnOutOfMemoryError ends it). */
  private void assertOperatorAlive() {
    assertThat(cluster.operator().alive())
        .as("operator JVM alive (exit code %s)", cluster.operator().exitCode())
        .isTrue();
  }

  private void innocentIsVerifiedWhileTheAttackRuns() throws Exception {
    health = new HealthWatch(cluster);
    cluster.innocentTenant();
    long started = System.nanoTime();
    try {
      await()
          .atMost(INNOCENT_WITHIN)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertOperatorAlive();
                return cluster.innocentVerified();
              });
    } catch (ConditionTimeoutException e) {
      // Say where the innocent tenant stands, so a failure here can be told apart from slowness.
      throw new AssertionError(
          "innocent tenant not verified within "
              + INNOCENT_WITHIN
              + ": "
              + cluster.innocentDiagnosis(),
          e);
    }
    System.out.printf(
        "hostile: innocent tenant verified after %d ms, operator live heap %.1f MiB%n",
        (System.nanoTime() - started) / 1_000_000, cluster.operator().liveHeapMiB());
    assertThat(cluster.openHostileGates()).isEmpty();
    assertThat(cluster.operator().alive()).isTrue();
    assertThat(cluster.healthz()).isTrue();
    health.stop();
    assertThat(health.longestFailureStreak()).as("consecutive /healthz failures").isLessThan(3);
  }

  @Test
  void thirtyTwoPagesOfJunkSeriesAtOnceAreReadInBoundedMemory() throws Exception {
    // The old 4 MiB cap and every junk page read at once: only streaming keeps the heap bounded
    // here.
    cluster =
        HostileTenants.start(
            Map.of(
                "KVGUARD_PROBE_MAX_BODY_BYTES",
                "4194304",
                "KVGUARD_PROBE_CONCURRENCY_PER_NAMESPACE",
                "32"));
    cluster.junkPages(32, 3_400_000);
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertOperatorAlive();
              for (int i = 0; i < 32; i++) {
                assertThat(cluster.hostileCondition("junk-" + i))
                    .as("junk-" + i)
                    .hasValueSatisfying(
                        c ->
                            assertThat(c)
                                .startsWith("False ProbeFailed")
                                .contains("vllm:cache_config_info"));
              }
            });
    innocentIsVerifiedWhileTheAttackRuns();
  }

  @Test
  void anEngineClaimingThirtyMillionTokensGetsNoPromptBuiltAndStaysShut() throws Exception {
    cluster = HostileTenants.start(Map.of());
    cluster.hugeClaim();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertOperatorAlive();
              assertThat(cluster.hostileCondition("claims-0"))
                  .hasValueSatisfying(
                      c ->
                          assertThat(c)
                              .startsWith("False RejectionProbeInconclusive")
                              // SGLang's first path, S1, at the claimed context length.
                              .contains(
                                  "30000000-token prompt (S1",
                                  "above KVGUARD_REJECTION_MAX_PROMPT_TOKENS"));
            });
    innocentIsVerifiedWhileTheAttackRuns();
  }

  @Test
  void aPodThatNeverAnswersSelectedByFortyPoliciesDelaysOnlyItsOwnNamespace() throws Exception {
    cluster = HostileTenants.start(Map.of());
    cluster.neverAnswering(40);
    // Let the forty policies queue their probes first: the innocent tenant comes after all of them.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                cluster
                    .client()
                    .resources(io.kvguard.customresource.ModelDeployment.class)
                    .inNamespace(HostileTenants.HOSTILE)
                    .list()
                    .getItems()
                    .stream()
                    .allMatch(
                        md -> md.getMetadata().getFinalizers() != null || md.getStatus() != null));
    innocentIsVerifiedWhileTheAttackRuns();
    assertThat(cluster.hostileCondition("silent-0").filter(c -> c.startsWith("True"))).isEmpty();
  }

  @Test
  void twoHalfSentRequestsToTheHealthPortDoNotHoldIt() throws Exception {
    cluster = HostileTenants.start(Map.of());
    cluster.halfSendToHealthPort(2);
    innocentIsVerifiedWhileTheAttackRuns();
    // Longer than the JDK server's request time limit (5 s): the half-sent requests are cut,
    // /healthz still answers.
    health = new HealthWatch(cluster);
    await()
        .during(Duration.ofSeconds(8))
        .atMost(Duration.ofSeconds(10))
        .until(() -> health.longestFailureStreak() == 0);
    cluster.halfSendToHealthPort(2);
    assertThat(cluster.healthz()).isTrue();
  }

  /**
   * Polls /healthz every half second, as a kubelet with a short period would, and keeps the longest
   * failure streak.
   */
  private static final class HealthWatch {
    private final AtomicInteger streak = new AtomicInteger();
    private final AtomicInteger longest = new AtomicInteger();
    private final java.util.concurrent.ScheduledExecutorService poller =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

    HealthWatch(HostileTenants cluster) {
      poller.scheduleWithFixedDelay(
          () -> {
            if (cluster.healthz()) {
              streak.set(0);
            } else {
              longest.accumulateAndGet(streak.incrementAndGet(), Math::max);
            }
          },
          0,
          500,
          java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    int longestFailureStreak() {
      return longest.get();
    }

    void stop() {
      poller.shutdownNow();
    }
  }
}

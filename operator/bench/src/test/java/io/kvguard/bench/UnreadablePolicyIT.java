package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29 §1 against the operator as the chart runs it (a JVM of its own, the chart's heap and JVM
 * options, {@link HostileTenants}): one tenant's ModelDeployment with {@code minReadyPods:
 * 3000000000}, stored before the operator starts (a real API server keeps such an object through
 * the CRD's later bounds), and another created while it runs. Before, the informer could not read
 * them: JOSDK stopped the operator (exit 1 at start, "Fatal error in informer" while running) and
 * no tenant was served. Now each is one object kvguard cannot apply, named in a Warning Event and
 * counted in a gauge, and every other policy is reconciled.
 */
class UnreadablePolicyIT {
  private HostileTenants cluster;

  @AfterEach
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private void assertOperatorAlive() {
    assertThat(cluster.operator().alive())
        .as("operator JVM alive (exit code %s)", cluster.operator().exitCode())
        .isTrue();
  }

  @Test
  void aModelDeploymentKvguardCannotReadIsNamedAndEveryOtherIsServed() throws Exception {
    cluster = HostileTenants.prepare();
    cluster.unreadablePolicy("stored-before");
    cluster.launch(Map.of());

    cluster.innocentTenant();
    await()
        .atMost(HostileTenantsIT.INNOCENT_WITHIN)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              assertOperatorAlive();
              assertThat(cluster.innocentVerified()).as(cluster.innocentDiagnosis()).isTrue();
            });

    cluster.unreadablePolicy("created-later");
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(
            () -> {
              assertOperatorAlive();
              assertThat(cluster.hostileEvents("UnreadableSpec"))
                  .anySatisfy(
                      e ->
                          assertThat(e)
                              .startsWith("stored-before: ")
                              .contains("hostile/stored-before")
                              .contains("spec.roles[0].minReadyPods")
                              .contains("3000000000"))
                  .anySatisfy(
                      e ->
                          assertThat(e)
                              .startsWith("created-later: ")
                              .contains("hostile/created-later")
                              .contains("spec.roles[0].minReadyPods"));
              assertThat(cluster.metrics())
                  .contains("kvguard_unreadable_modeldeployments{namespace=\"hostile\"} 2.0");
            });

    // Still up, still serving: the innocent tenant stays verified, nothing the bad policies
    // select was opened, and the health endpoint answers.
    assertOperatorAlive();
    assertThat(cluster.innocentVerified()).isTrue();
    assertThat(cluster.openHostileGates()).isEmpty();
    assertThat(cluster.healthz()).isTrue();
    assertThat(cluster.metrics())
        .doesNotContain("kvguard_unreadable_modeldeployments{namespace=\"innocent\"");
  }
}

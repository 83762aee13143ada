package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A deletion's pass where kvguard may not LIST the namespace's pods (HTTP 403: installed with
 * {@code watchNamespaces}, the namespace deleted with kvguard's RoleBinding). It waits out a
 * refusal shorter than {@link WatchLoss#BOUND}, which may pass and must not cost a pod created
 * meanwhile its hand-back; past the bound it hands back from what it has, so the finalizer does not
 * hold the namespace in Terminating for ever. No other pass ever reads that.
 */
class PodCacheDeletionPassTest {
  private static final String NS = OperatorHarness.NAMESPACE;
  private static final Instant T0 = Instant.parse("2026-12-07T21:00:00Z");

  @RegisterExtension
  final UnstartedControllerExtension cluster = new UnstartedControllerExtension();

  private final AtomicReference<Instant> now = new AtomicReference<>(T0);
  private final PodCache pods =
      new PodCache(
          pod -> Set.of(),
          1,
          new Clock() {
            @Override
            public ZoneOffset getZone() {
              return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
              throw new UnsupportedOperationException();
            }

            @Override
            public Instant instant() {
              return now.get();
            }
          });
  private final OnePolicyCache policies = new OnePolicyCache(ServeRole.policy());

  @BeforeEach
  void createPod() {
    cluster.client().pods().inNamespace(NS).resource(ServeRole.pod("engine-0")).create();
  }

  /** Refuses (403) kvguard's pod LISTs and WATCHes, or its WATCHes only. */
  private void refusePodRequests(boolean watchesOnly) {
    cluster
        .api()
        .faults(
            r ->
                r.getPath().startsWith("/api/v1/namespaces/" + NS + "/pods")
                        && r.getMethod().equals("GET")
                        && (!watchesOnly || r.getPath().contains("watch=true"))
                    ? new MockResponse()
                        .setResponseCode(403)
                        .setBody(EmbeddedApiServer.status(403, "Forbidden", "injected by the test"))
                    : null);
  }

  private PodCache.InUse deletionPass() {
    return pods.use(NS, cluster.sources(), policies, true);
  }

  @Test
  void aDeletionWaitsOutAListRefusedForLessThanTheBoundAndThenHandsBackWithoutThePods() {
    refusePodRequests(false);
    assertThatThrownBy(this::deletionPass).isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.listForbidden(NS)).contains(T0);
    now.set(T0.plusSeconds(60));
    assertThatThrownBy(this::deletionPass)
        .as("at the bound, not past it")
        .isInstanceOf(PodCache.StartFailed.class);

    now.set(T0.plusSeconds(61));
    try (PodCache.InUse held = deletionPass()) {
      assertThat(held.listForbiddenSince()).contains(T0);
      assertThat(pods.list(NS)).as("pods read by the deletion's pass").isEmpty();
      assertThat(pods.namespaces()).as("namespaces cached").isEmpty();
    }
    // Never a pass that judges or opens: it fails as before, and nothing is left held.
    assertThatThrownBy(() -> pods.use(NS, cluster.sources(), policies))
        .isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.list(NS)).isEmpty();
  }

  @Test
  void aListThatWorksAgainEndsTheRefusalAndTheDeletionHandsBackFromIt() {
    refusePodRequests(false);
    assertThatThrownBy(this::deletionPass).isInstanceOf(PodCache.StartFailed.class);
    cluster.api().faults(null);
    now.set(T0.plusSeconds(30));
    try (PodCache.InUse held = deletionPass()) {
      assertThat(held.listForbiddenSince()).isEmpty();
      assertThat(pods.list(NS).map(pod -> pod.getMetadata().getName())).containsExactly("engine-0");
    }
    assertThat(pods.listForbidden(NS)).isEmpty();
  }

  /**
   * A deletion's pass in a cached namespace whose selectors changed, where a relist's WATCH is
   * refused: it hands back from its own LIST, held for that pass alone. Meanwhile that LIST stands
   * in for the namespace's cache in the stranded-pod count (before, the namespace dropped out of
   * it, and the count to nothing, which restarts the alert's 10-minute wait), and the cache is put
   * back after the pass.
   */
  @Test
  void aDeletionsOwnListStandsInForTheNamespacesCacheAndTheCacheIsPutBackAfterIt() {
    pods.use(NS, cluster.sources(), policies).close();
    assertThat(pods.namespaces()).containsExactly(NS);
    cluster.client().pods().inNamespace(NS).resource(ServeRole.pod("engine-1")).create();
    refusePodRequests(true);
    ModelDeployment edited = ServeRole.policy();
    edited.getMetadata().setGeneration(2L);
    edited
        .getSpec()
        .setRoles(
            java.util.List.of(
                OperatorHarness.role(
                    "serve",
                    io.kvguard.customresource.Engine.SGLANG,
                    java.util.Map.of("app", "glm"))));
    OnePolicyCache changed = new OnePolicyCache(edited);

    try (PodCache.InUse held = pods.use(NS, cluster.sources(), changed, true)) {
      assertThat(held.listForbiddenSince()).isEmpty();
      assertThat(pods.namespaces()).as("namespaces counted for stranded pods").containsExactly(NS);
      assertThat(pods.list(NS).map(pod -> pod.getMetadata().getName()))
          .as("pods the deletion's pass reads: its own LIST")
          .contains("engine-1");
    }
    assertThat(pods.namespaces()).containsExactly(NS);
    assertThat(pods.list(NS).map(pod -> pod.getMetadata().getName()))
        .as("the namespace's cache, put back")
        .contains("engine-0");
  }
}

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
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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
              return this;
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

  /**
   * A deletion's pass every 5 s from T0 to {@code seconds} after it (ModelDeploymentReconciler
   * reschedules it so while the LIST is refused), each failing: up to the bound, not past it.
   */
  private void deletionPassesRefusedUntil(int seconds) {
    for (int at = 0; at <= seconds; at += 5) {
      now.set(T0.plusSeconds(at));
      assertThatThrownBy(this::deletionPass)
          .as("a deletion's pass %d s into the refusal", at)
          .isInstanceOf(PodCache.StartFailed.class);
    }
  }

  private PodCache.InUse deletionPass() {
    return pods.use(NS, cluster.sources(), policies, true);
  }

  @Test
  void aDeletionWaitsOutAListRefusedForLessThanTheBoundAndThenHandsBackWithoutThePods() {
    refusePodRequests(false);
    deletionPassesRefusedUntil(60);
    assertThat(pods.listForbidden(NS)).contains(T0);

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

  /** What a second deletion's pass read, and whether it was told the LIST was refused. */
  private record SecondPass(List<String> read, Optional<Instant> listForbiddenSince) {}

  private List<String> cachedNames() {
    return pods.list(NS).map(pod -> pod.getMetadata().getName()).sorted().toList();
  }

  /**
   * Runs a second deletion's pass on its own thread while {@code first} is held; lets {@code first}
   * go after 2 s (the second waits for it), and returns what the second read.
   */
  private SecondPass secondDeletionPass(PodCache.InUse first) throws InterruptedException {
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread second =
        new Thread(
            () -> {
              try (PodCache.InUse held = deletionPass()) {
                outcome.set(new SecondPass(cachedNames(), held.listForbiddenSince()));
              } catch (RuntimeException e) {
                outcome.set(e);
              }
            },
            "second-deletion-pass");
    second.start();
    second.join(TimeUnit.SECONDS.toMillis(2));
    first.close();
    second.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(second.isAlive()).as("the second deletion's pass still running").isFalse();
    assertThat(outcome.get()).as("the second deletion's pass").isInstanceOf(SecondPass.class);
    return (SecondPass) outcome.get();
  }

  /**
   * Review of f32f532. Every pod WATCH refused: the first deletion's pass lists and hands back from
   * its LIST. A pod is created meanwhile (born with the readiness gate of a policy deleted a moment
   * later). Several policies of a namespace deleted together run their passes at once, with the
   * same filter: the second read the first's LIST, without the pod, which nobody would then write.
   */
  @Test
  void aSecondDeletionsPassHandsBackFromItsOwnListNotTheFirstOnes() throws InterruptedException {
    refusePodRequests(true);
    PodCache.InUse first = deletionPass();
    assertThat(cachedNames()).as("the first deletion's LIST").containsExactly("engine-0");

    cluster.client().pods().inNamespace(NS).resource(ServeRole.pod("engine-1")).create();
    SecondPass second = secondDeletionPass(first);

    assertThat(second.read())
        .as("what the second deletion's pass hands back from")
        .contains("engine-0", "engine-1");
  }

  /**
   * Review of f32f532. Past the bound the first deletion's pass lets its policy go from nothing,
   * and says so. The second read the first's empty stand-in without a LIST of its own, and was not
   * told: its policy let go without a word.
   */
  @Test
  void aSecondDeletionsPassPastTheBoundIsToldItsNamespaceCouldNotBeListed()
      throws InterruptedException {
    refusePodRequests(false);
    deletionPassesRefusedUntil(60);
    now.set(T0.plusSeconds(61));
    PodCache.InUse first = deletionPass();
    assertThat(first.listForbiddenSince()).as("the first deletion's pass, told").contains(T0);

    SecondPass second = secondDeletionPass(first);

    assertThat(second.listForbiddenSince()).as("the second deletion's pass, told").contains(T0);
  }

  /**
   * Review of f32f532. The bound counted from the first refused LIST of a run however long ago: a
   * LIST refused once, ten minutes without any start (JOSDK stopped retrying), then a deletion's
   * pass whose LIST is refused once let its policy go at once. Refusals more than 30 s apart are
   * two runs.
   */
  @Test
  void aDeletionsFirstRefusedListAfterLongWithoutAnyStartIsNotPastTheBound() {
    refusePodRequests(false);
    assertThatThrownBy(() -> pods.use(NS, cluster.sources(), policies))
        .isInstanceOf(PodCache.StartFailed.class);
    now.set(T0.plusSeconds(600));

    assertThatThrownBy(this::deletionPass).isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.listForbidden(NS)).contains(T0.plusSeconds(600));
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeProofRouter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Adding pods to a proof router and removing them, against {@link FakeProofRouter} (the worker API
 * of sgl-model-gateway v0.5.18): what the router does with a registration that failed and with a
 * URL it already has a worker at.
 */
class RouterWorkersTest {
  private static final String FOR = "models/glm";
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** The proof router's --api-key: the engines' token, which kvguard sends. */
  private static final String TOKEN = "engine-bearer-51c7e0a2";

  private final EngineHttp http = EngineHttp.createDefault();
  private final RouterWorkers workers = new RouterWorkers(http);
  private FakeProofRouter router;
  private FakeEngine pod;

  @AfterEach
  void close() {
    if (router != null) {
      router.close();
    }
    if (pod != null) {
      pod.close();
    }
  }

  private EngineEndpoint routerEndpoint() {
    return EngineEndpoint.of("http", "127.0.0.1", router.port(), TIMEOUT)
        .withBearerToken(Optional.of(TOKEN))
        .startingNow();
  }

  private RouterWorkers.Wanted prefill(String url) {
    return new RouterWorkers.Wanted(
        "prefill-0", url, "prefill", OptionalLong.of(8998), Optional.empty());
  }

  /**
   * The router keeps the ID of a registration that failed reserved, and removing it fails ("Worker
   * … not found") instead of answering 404: that is the worker gone, not a removal to wait the
   * whole timeout for.
   */
  @Test
  void aFailedRegistrationIsRemovedWithoutWaitingOutTheTimeout() throws Exception {
    router = new FakeProofRouter().withApiKey(TOKEN).refuseRegistrations();

    RouterWorkers.Added added =
        workers.add(routerEndpoint(), List.of(prefill("http://127.0.0.1:9")), FOR);
    assertThat(added.problem()).get(STRING).contains("failed");
    assertThat(added.ids()).hasSize(1);

    long start = System.nanoTime();
    Optional<String> notRemoved = workers.remove(routerEndpoint(), added.ids());

    assertThat(notRemoved).isEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.dividedBy(2));
  }

  /**
   * Someone adds the pod to the router between kvguard's listing and its POST: the router answers
   * with that worker's ID and fails kvguard's job. kvguard did not add that worker and must not
   * remove it.
   */
  @Test
  void aWorkerSomeoneElseAddedAtThePodsUrlIsNotRemoved() throws Exception {
    pod = new FakeEngine().answer("/health", FakeEngine.Answer.status(200));
    String url = "http://127.0.0.1:" + pod.port();
    router =
        new FakeProofRouter().withApiKey(TOKEN).withWorkerAddedBeforeThePostFor(url, "prefill");

    RouterWorkers.Added added = workers.add(routerEndpoint(), List.of(prefill(url)), FOR);
    workers.remove(routerEndpoint(), added.ids());

    assertThat(added.problem()).get(STRING).contains("kvguard did not add");
    assertThat(added.ids()).isEmpty();
    assertThat(router.lists(url)).isTrue();
    assertThat(router.removed()).isZero();
  }

  /**
   * A registration still running at the deadline is no answer from the router: the proof is tried
   * again a period later (ProbeFailed), not held inconclusive until the pods or the spec change.
   */
  @Test
  void aRegistrationStillRunningAtTheDeadlineIsTriedAgainLater() throws Exception {
    router = new FakeProofRouter().withApiKey(TOKEN).holdRegistrations();

    RouterWorkers.Added added =
        workers.add(
            EngineEndpoint.of("http", "127.0.0.1", router.port(), Duration.ofSeconds(1))
                .withBearerToken(Optional.of(TOKEN))
                .startingNow(),
            List.of(prefill("http://127.0.0.1:9")),
            FOR);

    assertThat(added.problem()).get(STRING).contains("timed out");
    assertThat(added.unreachable()).isTrue();
    assertThat(added.ids()).hasSize(1);
  }

  /** A pod added and removed again: the worker is gone once removal returns. */
  @Test
  void anAddedPodIsRegisteredHealthyAndGoneAfterRemoval() throws Exception {
    pod = new FakeEngine().answer("/health", FakeEngine.Answer.status(200));
    String url = "http://127.0.0.1:" + pod.port();
    router = new FakeProofRouter().withApiKey(TOKEN);

    RouterWorkers.Added added = workers.add(routerEndpoint(), List.of(prefill(url)), FOR);
    assertThat(added.problem()).isEmpty();
    assertThat(router.lists(url)).isTrue();

    assertThat(workers.remove(routerEndpoint(), added.ids())).isEmpty();
    assertThat(router.lists(url)).isFalse();
    assertThat(router.removed()).isEqualTo(1);
  }
}

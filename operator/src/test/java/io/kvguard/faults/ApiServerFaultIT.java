package io.kvguard.faults;

import static io.kvguard.faults.FaultBudget.request;
import static io.kvguard.faults.FaultBudget.status;
import static io.kvguard.faults.FaultBudget.times;
import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The API server misbehaves: conflicts, errors, throttling, a pod deleted under a running probe, a
 * watch that drops. The gate must still converge to the right value, with a bounded number of
 * requests, and never open on a guess.
 */
class ApiServerFaultIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private OperatorHarness h;

  @AfterEach
  void stop() {
    timer.shutdownNow();
    if (h != null) {
      h.close();
    }
  }

  private void awaitGate(String pod, String status, String reason) {
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () ->
                assertThat(h.gate(pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo(reason);
                          assertThat(c.getStatus()).isEqualTo(status);
                        }));
  }

  private long count(String method, String pathPart) {
    return h.api.requests().stream()
        .filter(r -> r.method().equals(method) && r.path().contains(pathPart))
        .count();
  }

  private void createVerifiablePod() {
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
  }

  private void createPolicy() {
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
  }

  private void serveOneVerifiedPod() {
    createVerifiablePod();
    createPolicy();
  }

  @Test
  void conflictsOnPodStatusAndModelDeploymentStatusWritesAreRetriedUntilTheGateConverges() {
    h = new OperatorHarness();
    createVerifiablePod();
    FaultBudget podConflicts =
        new FaultBudget(
            request("PATCH", "/pods/serve-0/status"), times(3, status(409, "Conflict")));
    FaultBudget statusConflicts =
        new FaultBudget(
            request("PATCH", "/modeldeployments/glm/status"), times(2, status(409, "Conflict")));
    h.api.faults(
        r -> {
          MockResponse answer = podConflicts.apply(r);
          return answer != null ? answer : statusConflicts.apply(r);
        });
    h.start();
    createPolicy();

    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo("1/1"));
    assertThat(podConflicts.spent()).isTrue();
    assertThat(statusConflicts.spent()).isTrue();
    await().untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());
    // Three conflicts, then the write that lands; a re-plan after a conflict may find nothing left
    // to do.
    System.out.println(
        "api-faults conflicts: pod status patches="
            + count("PATCH", "/pods/serve-0/status")
            + " (409 injected "
            + podConflicts.injected()
            + "), modeldeployment status patches="
            + count("PATCH", "/modeldeployments/glm/status")
            + " (409 injected "
            + statusConflicts.injected()
            + ")");
    assertThat(count("PATCH", "/pods/serve-0/status")).isBetween(4L, 6L);
    assertThat(count("PATCH", "/modeldeployments/glm/status")).isLessThanOrEqualTo(8L);
  }

  @Test
  void serverErrorsAndThrottlingAreRetriedWithBackoffAndTheRetriesAreBounded() {
    h = new OperatorHarness();
    createVerifiablePod();
    List<Supplier<MockResponse>> answers = new ArrayList<>(times(3, status(500, "InternalError")));
    answers.addAll(times(3, status(429, "TooManyRequests")));
    FaultBudget podErrors = new FaultBudget(request("PATCH", "/pods/serve-0"), answers);
    h.api.faults(podErrors);
    h.start();
    createPolicy();

    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(h.labelled("serve-0")).isTrue());
    assertThat(podErrors.injected()).isEqualTo(6);
    // Settled: no retry keeps going after success.
    long settled = count("PATCH", "/pods/serve-0");
    System.out.println(
        "api-faults errors: pod patches=" + settled + " (500 x3 and 429 x3 injected)");
    // Six faults, two writes that land (condition, then label), and at most one re-planned retry
    // per fault.
    assertThat(settled).isLessThanOrEqualTo(6 + 2 + 6);
    // Backoff: no retry follows its fault at once, and each waits longer than the one before
    // (fabric8's
    // exponential backoff, from 100 ms).
    List<EmbeddedApiServer.Request> patches =
        h.api.requests().stream()
            .filter(
                r ->
                    r.method().equals("PATCH")
                        && r.path().split("\\?")[0].matches(".*/pods/serve-0(/status)?"))
            .toList();
    List<Long> gapsAfterFaultsMillis = new ArrayList<>();
    for (int i = 0; i + 1 < patches.size(); i++) {
      if (patches.get(i).status() >= 429) {
        gapsAfterFaultsMillis.add(
            (patches.get(i + 1).atNanos() - patches.get(i).atNanos()) / 1_000_000);
      }
    }
    System.out.println(
        "api-faults errors: ms from each fault to the next attempt " + gapsAfterFaultsMillis);
    assertThat(gapsAfterFaultsMillis)
        .hasSize(6)
        .isSorted()
        .allSatisfy(gap -> assertThat(gap).isGreaterThanOrEqualTo(50L));
    await()
        .during(Duration.ofSeconds(3))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(count("PATCH", "/pods/serve-0")).isEqualTo(settled));
  }

  @Test
  void aPodWhoseLabelWriteIsAlwaysRefusedDoesNotStopThePassFromGatingTheOthers() {
    h = new OperatorHarness();
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.pod("serve-1", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    // An admission webhook that refuses every label change of serve-0, which comes first in each
    // pass.
    FaultBudget refusals =
        new FaultBudget(
            r ->
                r.getMethod().equals("PATCH")
                    && r.getPath().split("\\?")[0].endsWith("/pods/serve-0"),
            times(10_000, status(403, "Forbidden")));
    h.api.faults(refusals);
    h.start();
    createPolicy();

    awaitGate("serve-1", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(h.labelled("serve-1")).isTrue());
    // serve-0's condition landed (it is written before the label); its label never does, and the
    // pass is retried.
    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(h.labelled("serve-0")).isFalse();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(refusals.injected()).isGreaterThan(1));
  }

  @Test
  void noPodIsWrittenUntilThePolicysFinalizerLands() {
    h = new OperatorHarness();
    createVerifiablePod();
    java.util.function.BiPredicate<String, String> finalizerPatch =
        (method, path) ->
            method.equals("PATCH") && path.split("\\?")[0].endsWith("/modeldeployments/glm");
    FaultBudget finalizerErrors =
        new FaultBudget(
            r -> finalizerPatch.test(r.getMethod(), r.getPath()),
            times(3, status(500, "InternalError")));
    h.api.faults(finalizerErrors);
    h.start();
    createPolicy();

    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(finalizerErrors.injected()).isEqualTo(3);
    // Whatever kvguard wrote to the pod, deleting the policy can undo: the finalizer was in place
    // first.
    List<EmbeddedApiServer.Request> requests = h.operatorRequests();
    int finalizerLanded =
        java.util.stream.IntStream.range(0, requests.size())
            .filter(
                i ->
                    finalizerPatch.test(requests.get(i).method(), requests.get(i).path())
                        && requests.get(i).status() < 400)
            .findFirst()
            .orElseThrow();
    int firstPodWrite =
        java.util.stream.IntStream.range(0, requests.size())
            .filter(
                i ->
                    !requests.get(i).method().equals("GET")
                        && requests.get(i).path().contains("/pods/serve-0"))
            .findFirst()
            .orElseThrow();
    assertThat(finalizerLanded).isLessThan(firstPodWrite);
    assertThat(h.get("glm").getMetadata().getFinalizers())
        .containsExactly("modeldeployments.kvguard.io/finalizer");
  }

  @Test
  void aPodDeletedWhileItsProbeIsInFlightIsNeitherResurrectedNorHammered() throws IOException {
    h = new OperatorHarness().start();
    CountDownLatch probing = new CountDownLatch(1);
    SglangFaultEngine shape = new SglangFaultEngine();
    try (RawEngine slow = new RawEngine().routes(shape.healthy())) {
      slow.route(
          "/server_info",
          (socket, out) -> {
            probing.countDown();
            RawEngine.drip("application/json", shape.poolBody(), 3)
                .answer(socket, out); // about 2 s
          });
      h.pods.createRunning(OperatorHarness.NAMESPACE, "serve-0", SERVE, slow.port(), true);
      h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
      await().atMost(Duration.ofSeconds(20)).until(() -> probing.getCount() == 0);
      h.api.clearRequests();
      h.client.pods().inNamespace(OperatorHarness.NAMESPACE).withName("serve-0").delete();

      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> h.status("glm") != null && h.status("glm").pods.isEmpty());
      // Watch the operator's traffic (recorded locally, so watching adds none) for a few quiet
      // seconds.
      await()
          .during(Duration.ofSeconds(4))
          .atMost(Duration.ofSeconds(6))
          .untilAsserted(
              () -> {
                List<EmbeddedApiServer.Request> writes =
                    h.api.requests().stream()
                        .filter(
                            r ->
                                r.path().contains("/pods")
                                    && !r.method().equals("GET")
                                    && !r.method().equals("DELETE"))
                        .toList();
                assertThat(writes)
                    .as("writes to a deleted pod")
                    .allSatisfy(r -> assertThat(r.status()).isGreaterThanOrEqualTo(400))
                    .hasSizeLessThanOrEqualTo(2);
                assertThat(h.api.requests().stream().filter(r -> r.status() >= 400))
                    .as("no error storm")
                    .hasSizeLessThanOrEqualTo(4);
              });
      assertThat(h.api.requests())
          .noneMatch(r -> r.method().equals("POST") && r.path().contains("/pods"));
      assertThat(h.getPod("serve-0")).as("not resurrected").isNull();
    }
  }

  /**
   * Opens the watch as asked, then closes it after {@code afterMillis}: a watch the server drops.
   */
  private Supplier<MockResponse> droppedWatch(long afterMillis) {
    return () ->
        new MockResponse()
            .withWebSocketUpgrade(
                new WebSocketListener() {
                  @Override
                  public void onOpen(
                      WebSocket webSocket, io.fabric8.mockwebserver.http.Response response) {
                    timer.schedule(
                        () -> webSocket.close(1000, "dropped by the test"),
                        afterMillis,
                        TimeUnit.MILLISECONDS);
                  }
                });
  }

  @Test
  void aPodWatchThatDropsAndFailsToReconnectResumesAndStillDeliversChanges() {
    h = new OperatorHarness();
    List<Supplier<MockResponse>> answers = new ArrayList<>();
    answers.add(droppedWatch(1_500));
    answers.add(status(500, "InternalError"));
    answers.add(droppedWatch(200));
    FaultBudget watchFaults =
        new FaultBudget(
            r ->
                r.getMethod().equals("GET")
                    && r.getPath().contains("pods")
                    && r.getPath().contains("watch=true"),
            answers);
    h.api.faults(watchFaults);
    h.start();
    // Pods are watched only in namespaces that hold a ModelDeployment (issue 18 §2): the policy
    // starts the watch.
    serveOneVerifiedPod();
    await().atMost(Duration.ofSeconds(30)).until(watchFaults::spent);
    awaitGate("serve-0", "True", "PoolSufficient");
    // A change after the reconnect must still arrive: the engine restarts with a pool too small.
    h.client.pods().inNamespace(OperatorHarness.NAMESPACE).withName("serve-0").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> h.getPod("serve-0") == null);
    LatePods.add(
        h, "serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000)));
    awaitGate("serve-0", "False", "PoolTooSmall");
    await().untilAsserted(() -> assertThat(h.labelled("serve-0")).isFalse());
  }

  /**
   * A namespace's first pod WATCH refused once, after its LIST was answered: the informer's start
   * fails (fabric8 v7.5.2 stops an informer whose start has not completed; JOSDK v5.2.3
   * InformerWrapper.start throws it to PodCache), the pass fails and is retried, and the pod is
   * gated. The replica does not step down for it (production: exit): before, it did, as the LIST
   * had made the informer report hasSynced().
   */
  @Test
  void aNamespacesFirstPodWatchRefusedIsRetriedByThePassNotAStepDown() {
    h = new OperatorHarness();
    java.util.concurrent.atomic.AtomicInteger steppedDown =
        new java.util.concurrent.atomic.AtomicInteger();
    FaultBudget refusedWatch =
        new FaultBudget(FaultBudget::operatorPodWatch, List.of(status(403, "Forbidden")));
    h.api.faults(refusedWatch);
    h.start(OperatorHarness.productionConfig(), steppedDown::incrementAndGet);
    serveOneVerifiedPod();

    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(refusedWatch.injected()).isEqualTo(1);
    assertThat(steppedDown).hasValue(0);
  }
}

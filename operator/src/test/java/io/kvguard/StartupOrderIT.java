package io.kvguard;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.customresource.Engine;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The operator's start waits only for what its first probe needs (issue 28 §5): the informers start
 * while the verdict key Secret is still being read, and the first pass, which trusts and signs
 * records with that key, still waits for the read's answer.
 */
class StartupOrderIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm");
  private static final long HELD_MILLIS = 3_000;

  @Test
  void informersStartWhileTheKeyIsReadAndNoPodIsWrittenBeforeItIsAnswered() {
    try (OperatorHarness h = new OperatorHarness()) {
      // A slow API server: the verdict key's read is answered (absent) only after HELD_MILLIS.
      List<EmbeddedApiServer.Request> requests =
          startAndAwaitTheGate(
              h,
              request ->
                  request.getMethod().equals("GET") && request.getPath().startsWith(keyPath())
                      ? new MockResponse()
                          .setResponseCode(404)
                          .setBody(EmbeddedApiServer.status(404, "NotFound", "secrets not found"))
                          .setBodyDelay(HELD_MILLIS, TimeUnit.MILLISECONDS)
                      : null);
      long keyAnswered =
          first(requests, r -> r.method().equals("GET") && r.path().startsWith(keyPath()))
              + TimeUnit.MILLISECONDS.toNanos(HELD_MILLIS);
      long policyList =
          first(
              requests,
              r -> r.method().equals("GET") && r.path().contains("/modeldeployments") && !watch(r));
      long firstPodWrite =
          first(requests, r -> r.method().equals("PATCH") && r.path().contains("/pods/"));
      assertThat(policyList)
          .as("the ModelDeployment informer listed before the held key read was answered")
          .isLessThan(keyAnswered);
      assertThat(firstPodWrite)
          .as("no pod was written before the key read was answered")
          .isGreaterThan(keyAnswered);
      assertThat(VerdictRecords.of(h.getPod("serve-0"), "glm").sig())
          .as("the first pass signed its record with the key")
          .isNotNull();
    }
  }

  /**
   * The namespace's pods are listed while the lease is still being acquired (an informer writes
   * nothing, so it need not wait for the lease), and nothing is written to a pod before the lease
   * is held. Before issue 28 §5 the first pass, which runs only once the lease is held, registered
   * the pod informer: the pods' LIST came after the lease's answer.
   */
  @Test
  void podsAreListedWhileTheLeaseIsAcquiredAndNoPodIsWrittenBeforeItIsHeld() {
    try (OperatorHarness h = new OperatorHarness()) {
      // A slow API server: the elector's first read of the lease is answered (absent) only after
      // HELD_MILLIS.
      List<EmbeddedApiServer.Request> requests =
          startAndAwaitTheGate(
              h,
              holdingTheFirst(
                  "GET",
                  leasePath(),
                  404,
                  EmbeddedApiServer.status(404, "NotFound", "leases not found")));
      long leaseAnswered =
          first(requests, r -> r.method().equals("GET") && r.path().startsWith(leasePath()))
              + TimeUnit.MILLISECONDS.toNanos(HELD_MILLIS);
      long podList = first(requests, r -> r.method().equals("GET") && podList(r) && !watch(r));
      long firstPodWrite =
          first(requests, r -> r.method().equals("PATCH") && r.path().contains("/pods/"));
      assertThat(podList)
          .as("the namespace's pods were listed before the held lease read was answered")
          .isLessThan(leaseAnswered);
      assertThat(firstPodWrite)
          .as("no pod was written before the lease was held")
          .isGreaterThan(leaseAnswered);
    }
  }

  /**
   * The namespace's pods are listed as soon as the ModelDeployment informer has synced, before the
   * elector's first request: JOSDK asks for a SelfSubjectRulesReview before it starts the elector,
   * in the thread that started the operator (java-operator-sdk v5.2.3, {@code
   * LeaderElectionManager.start}, {@code checkLeaseAccess}), and a warm-up started only when that
   * returned waited for the review's answer.
   */
  @Test
  void podsAreListedWhileTheLeaseAccessReviewIsAnswered() {
    try (OperatorHarness h = new OperatorHarness()) {
      List<EmbeddedApiServer.Request> requests =
          startAndAwaitTheGate(h, holdingTheFirst("POST", REVIEW_PATH, 201, LEASE_RULES));
      long reviewAnswered =
          first(requests, r -> r.method().equals("POST") && r.path().startsWith(REVIEW_PATH))
              + TimeUnit.MILLISECONDS.toNanos(HELD_MILLIS);
      long podList = first(requests, r -> r.method().equals("GET") && podList(r) && !watch(r));
      assertThat(podList)
          .as("the namespace's pods were listed before the held review was answered")
          .isLessThan(reviewAnswered);
      assertThat(first(requests, r -> r.method().equals("PATCH") && r.path().contains("/pods/")))
          .as("no pod was written before the review was answered and the lease held")
          .isGreaterThan(reviewAnswered);
    }
  }

  private static final String REVIEW_PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

  /** What the embedded API server answers every review with: leases may be written. */
  private static final String LEASE_RULES =
      "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectRulesReview\","
          + "\"status\":{\"incomplete\":false,\"resourceRules\":[{\"verbs\":[\"*\"],"
          + "\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"]}],"
          + "\"nonResourceRules\":[]}}";

  /**
   * One SGLang pod a policy selects, the API server answering as {@code fault} says, the operator
   * started: returns its requests once the pod's gate is open.
   */
  private static List<EmbeddedApiServer.Request> startAndAwaitTheGate(
      OperatorHarness h,
      java.util.function.Function<io.fabric8.mockwebserver.http.RecordedRequest, MockResponse>
          fault) {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("serve-0", SERVE, engine);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    h.api.faults(fault);
    h.api.clearRequests();

    h.start();

    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
    return h.operatorRequests();
  }

  /** Answers the first {@code method} request under {@code path} as given, HELD_MILLIS late. */
  private static java.util.function.Function<
          io.fabric8.mockwebserver.http.RecordedRequest, MockResponse>
      holdingTheFirst(String method, String path, int code, String body) {
    java.util.concurrent.atomic.AtomicBoolean held =
        new java.util.concurrent.atomic.AtomicBoolean();
    return request ->
        request.getMethod().equals(method)
                && request.getPath().startsWith(path)
                && held.compareAndSet(false, true)
            ? new MockResponse()
                .setResponseCode(code)
                .setBody(body)
                .setBodyDelay(HELD_MILLIS, TimeUnit.MILLISECONDS)
            : null;
  }

  private static String leasePath() {
    return "/apis/coordination.k8s.io/v1/namespaces/"
        + OperatorHarness.OPERATOR_NAMESPACE
        + "/leases";
  }

  /** A LIST or WATCH of a namespace's pods (not a single pod's read). */
  private static boolean podList(EmbeddedApiServer.Request request) {
    String path = request.path();
    int query = path.indexOf('?');
    return (query < 0 ? path : path.substring(0, query)).endsWith("/pods");
  }

  private static String keyPath() {
    return "/api/v1/namespaces/" + OperatorHarness.OPERATOR_NAMESPACE + "/secrets";
  }

  private static boolean watch(EmbeddedApiServer.Request request) {
    return request.path().contains("watch=true");
  }

  private static long first(
      List<EmbeddedApiServer.Request> requests,
      java.util.function.Predicate<EmbeddedApiServer.Request> which) {
    return requests.stream()
        .filter(which)
        .mapToLong(EmbeddedApiServer.Request::atNanos)
        .min()
        .orElseThrow(() -> new AssertionError("no such request among " + requests));
  }
}

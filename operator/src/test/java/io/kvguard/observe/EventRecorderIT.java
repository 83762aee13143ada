package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.testkit.EmbeddedApiServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The recorder against an API server: one object per (object, type, reason) found again after a
 * restart or re-created after it expired; a rate limit that delays and merges rather than drops;
 * 429 and 5xx retried after a pause, refusals dropped; every outcome counted.
 */
class EventRecorderIT {
  private static final String NAMESPACE = "inference";
  private static final InvolvedObject GLM =
      new InvolvedObject(
          "kvguard.io/v1alpha1",
          "ModelDeployment",
          NAMESPACE,
          "glm",
          "4f1c2a7e-0000-4000-8000-000000000001");
  private static final EventRecorderSettings QUICK =
      new EventRecorderSettings(
          25, Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofSeconds(1), 3);
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final List<EventRecorder> recorders = new ArrayList<>();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

  EventRecorderIT() {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build())
        .create();
  }

  @AfterEach
  void stop() {
    timer.shutdownNow();
    recorders.forEach(EventRecorder::close);
    client.close();
    api.close();
  }

  private EventRecorder recorder(EventRecorderSettings settings) {
    EventRecorder recorder =
        new EventRecorder(
            EventRecorder.clientWithoutRetries(client),
            new KvguardMetrics(registry),
            Clock.systemUTC(),
            "kvguard-test-0",
            settings);
    recorders.add(recorder);
    return recorder;
  }

  private static List<Announcement> failures(int from, int n) {
    List<Announcement> pods = new ArrayList<>();
    for (int i = from; i < from + n; i++) {
      pods.add(
          new Announcement(
              "pod serve-" + i + " (role serve): connection refused",
              "serve-" + i + " (role serve): connection refused"));
    }
    return pods;
  }

  private void announce(EventRecorder recorder, int from, int n) {
    recorder.announce(GLM, "Warning", "ProbeFailed", "turned ProbeFailed", failures(from, n));
  }

  private List<Event> events() {
    return client.v1().events().inNamespace(NAMESPACE).list().getItems();
  }

  private int count() {
    List<Event> events = events();
    assertThat(events).hasSize(1);
    return events.get(0).getCount();
  }

  private List<String> eventRequests() {
    return api.requests().stream()
        .filter(r -> r.path().contains("/events") && !r.path().contains("watch"))
        .filter(r -> !(r.method().equals("GET") && r.path().endsWith("/events")))
        .map(r -> r.method() + " " + (r.status() / 100 == 2 ? "2xx" : String.valueOf(r.status())))
        .toList();
  }

  private double writes(String outcome) {
    return registry.find("kvguard.event.writes").tag("outcome", outcome).counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }

  @Test
  void aRestartedOperatorAddsToTheEventItsPredecessorWrote() {
    EventRecorder first = recorder(QUICK);
    announce(first, 0, 3);
    await().untilAsserted(() -> assertThat(count()).isEqualTo(3));
    first.close();

    announce(recorder(QUICK), 3, 2);
    await()
        .untilAsserted(
            () -> {
              assertThat(count()).isEqualTo(5);
              assertThat(writes("patched")).isEqualTo(1);
            });
    Event event = events().get(0);
    assertThat(event.getMetadata().getName())
        .isEqualTo(EventNames.of(GLM, "Warning", "ProbeFailed"));
    assertThat(event.getMessage())
        .isEqualTo(
            "2 pods turned ProbeFailed: serve-3 (role serve): connection refused; "
                + "serve-4 (role serve): connection refused");
    assertThat(event.getInvolvedObject().getUid()).isEqualTo(GLM.uid());
    // Created once; the second process learns the count (create refused as existing, then get) and
    // patches it.
    assertThat(eventRequests()).containsExactly("POST 2xx", "POST 409", "GET 2xx", "PATCH 2xx");
    assertThat(writes("created")).isEqualTo(1);
    assertThat(writes("patched")).isEqualTo(1);
  }

  @Test
  void anEventTheServerNoLongerHoldsIsCreatedAgain() {
    EventRecorder recorder = recorder(QUICK);
    announce(recorder, 0, 1);
    await().untilAsserted(() -> assertThat(count()).isEqualTo(1));
    // The API server drops an Event an hour (--event-ttl) after its last write.
    client
        .v1()
        .events()
        .inNamespace(NAMESPACE)
        .withName(EventNames.of(GLM, "Warning", "ProbeFailed"))
        .delete();
    await().untilAsserted(() -> assertThat(events()).isEmpty());

    announce(recorder, 1, 1);
    await().untilAsserted(() -> assertThat(count()).isEqualTo(1));
    assertThat(events().get(0).getMessage()).startsWith("pod serve-1 ");
    assertThat(eventRequests()).containsExactly("POST 2xx", "DELETE 2xx", "PATCH 404", "POST 2xx");
  }

  @Test
  void theRateLimitHoldsWritesBackAndTheNextWriteCarriesEverythingHeld() {
    EventRecorder recorder =
        recorder(
            new EventRecorderSettings(
                2, Duration.ofSeconds(1), Duration.ofMillis(200), Duration.ofSeconds(1), 3));
    AtomicInteger sent = new AtomicInteger();
    long started = System.nanoTime();
    // Thirty transitions, one every 50 ms, each in a pass of its own.
    timer.scheduleAtFixedRate(
        () -> {
          int i = sent.getAndIncrement();
          if (i < 30) {
            announce(recorder, i, 1);
          }
        },
        0,
        50,
        TimeUnit.MILLISECONDS);
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(count()).isEqualTo(30));
    double seconds = (System.nanoTime() - started) / 1e9;
    long written =
        eventRequests().stream().filter(r -> r.startsWith("POST") || r.startsWith("PATCH")).count();
    System.out.println(
        "event-rate-limit: 30 transitions in "
            + written
            + " writes over "
            + Math.round(seconds * 10) / 10.0
            + " s");
    // Two at once, then one a second, each carrying what waited.
    assertThat(written).isLessThanOrEqualTo(2 + (long) Math.ceil(seconds)).isLessThan(30);
  }

  @Test
  void aThrottledWriteWaitsAndIsRetriedWithWhatCameMeanwhile() {
    AtomicInteger throttled = new AtomicInteger();
    api.faults(
        request ->
            request.getPath().contains("/events")
                    && !request.getMethod().equals("GET")
                    && throttled.getAndIncrement() < 2
                ? new MockResponse()
                    .setResponseCode(429)
                    .setBody(EmbeddedApiServer.status(429, "TooManyRequests", "slow down"))
                : null);
    EventRecorder recorder = recorder(QUICK);
    announce(recorder, 0, 1);
    await().untilAsserted(() -> assertThat(writes("retried")).isEqualTo(1));
    announce(recorder, 1, 1);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(count()).isEqualTo(2);
              assertThat(writes("created")).isEqualTo(1);
            });
    assertThat(writes("retried")).isEqualTo(2);
    assertThat(events().get(0).getMessage())
        .startsWith("2 pods turned ProbeFailed: serve-0 (role serve)");
    // Backoff: 200 ms, then 400 ms (QUICK), never at once.
    List<EmbeddedApiServer.Request> posts =
        api.requests().stream()
            .filter(r -> r.path().contains("/events") && r.method().equals("POST"))
            .toList();
    assertThat(posts).extracting(EmbeddedApiServer.Request::status).containsExactly(429, 429, 201);
    assertThat((posts.get(1).atNanos() - posts.get(0).atNanos()) / 1_000_000)
        .isGreaterThanOrEqualTo(150);
    assertThat((posts.get(2).atNanos() - posts.get(1).atNanos()) / 1_000_000)
        .isGreaterThanOrEqualTo(350);
  }

  @Test
  void writesThatCannotSucceedAreDroppedAndCounted() {
    api.faults(
        request -> {
          if (!request.getPath().contains("/events") || !request.getMethod().equals("POST")) {
            return null;
          }
          return request.getPath().contains("/forbidden/")
              ? new MockResponse()
                  .setResponseCode(403)
                  .setBody(EmbeddedApiServer.status(403, "Forbidden", "injected"))
              : new MockResponse()
                  .setResponseCode(500)
                  .setBody(EmbeddedApiServer.status(500, "InternalError", "injected"));
        });
    EventRecorder recorder = recorder(QUICK);
    announce(recorder, 0, 1);
    // 500 is retried: three attempts (QUICK.maxAttempts), then the write is given up.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(writes("dropped")).isEqualTo(1));
    assertThat(writes("retried")).isEqualTo(2);
    assertThat(eventRequests()).containsExactly("POST 500", "POST 500", "POST 500");

    // A refusal that would repeat (403: RBAC, or a namespace being deleted) is dropped at once.
    InvolvedObject forbidden =
        new InvolvedObject(GLM.apiVersion(), GLM.kind(), "forbidden", "glm", GLM.uid() + "-2");
    recorder.announce(forbidden, "Warning", "ProbeFailed", "turned ProbeFailed", failures(0, 1));
    await().untilAsserted(() -> assertThat(writes("dropped")).isEqualTo(2));
    assertThat(writes("retried")).isEqualTo(2);
    assertThat(events()).isEmpty();
  }
}

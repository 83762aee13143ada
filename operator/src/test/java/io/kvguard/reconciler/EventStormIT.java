package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.observe.KvguardMetrics;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Events at the scale of a real outage. One Event per (ModelDeployment, reason), its count and
 * message updated, so a thousand pod failures are a handful of writes to one object, and every one
 * of them is still announced; an API server that throttles Events (EventRateLimit answers 429)
 * slows neither gates nor status.
 */
class EventStormIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final String EVENTS_PATH =
      "/api/v1/namespaces/" + OperatorHarness.NAMESPACE + "/events";

  /**
   * "37 pods turned ProbeFailed: a (role serve): ...; b (role serve): ... and 35 more", or "pod a
   * (role serve): ...".
   */
  private static final Pattern SUMMARY = Pattern.compile("^(\\d+) pods [^:]+: ");

  private static final Pattern LISTED =
      Pattern.compile("(?:^\\d+ pods [^:]+: |; )(serve-\\d+) \\(role serve");
  private static final Pattern ALONE = Pattern.compile("^pod (serve-\\d+) \\(role serve\\)");
  private OperatorHarness h;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  private ModelDeployment policy(int periodSeconds) {
    ModelDeployment md = h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE));
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(periodSeconds);
    md.getSpec().setProbe(probe);
    return md;
  }

  /**
   * Pods of every role with this reason (the status lists at most 50 pods and counts them all per
   * reason).
   */
  private long podsWithReason(String reason) {
    return h.status("glm").roles.stream()
        .filter(r -> r.podsByReason != null)
        .mapToLong(r -> r.podsByReason.getOrDefault(reason, 0))
        .sum();
  }

  private List<EmbeddedApiServer.Request> operatorEventRequests() {
    return h.operatorRequests().stream().filter(r -> r.path().startsWith(EVENTS_PATH)).toList();
  }

  private double eventWrites(String outcome) {
    var counters = h.registry.find("kvguard.event.writes").tag("outcome", outcome).counters();
    return counters.stream().mapToDouble(c -> c.count()).sum();
  }

  private Event event(String reason) {
    return h.events().stream()
        .filter(e -> reason.equals(e.getReason()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + reason + " event yet"));
  }

  @Test
  void aThousandPodFailuresWriteOneEventPerReasonAndAnnounceEveryTransition() {
    int pods = 1_000;
    h = new OperatorHarness().start();
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    for (int i = 0; i < pods; i++) {
      h.pod("serve-" + i, SERVE, engine);
    }
    long started = System.nanoTime();
    h.create(policy(2));
    await()
        .atMost(Duration.ofSeconds(180))
        .untilAsserted(() -> assertThat(h.status("glm").verified).isEqualTo(pods + "/" + pods));

    // The engine behind every pod goes down at once.
    long outageStarted = System.nanoTime();
    Map<String, FakeEngine.Answer> down = new HashMap<>();
    EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)
        .keySet()
        .forEach(path -> down.put(path, FakeEngine.Answer.status(503)));
    engine.serve(down);
    await()
        .atMost(Duration.ofSeconds(180))
        .untilAsserted(() -> assertThat(podsWithReason("ProbeFailed")).isEqualTo(pods));
    // Every failure is counted in some ProbeFailed Event (one per pod, or one for all).
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(
                        h.events().stream()
                            .filter(e -> "ProbeFailed".equals(e.getReason()))
                            .mapToInt(Event::getCount)
                            .sum())
                    .isEqualTo(pods));
    double outageSeconds = (System.nanoTime() - outageStarted) / 1e9;

    // Bounded: one Event object per (ModelDeployment, reason), however many pods changed.
    List<Event> events = h.events();
    System.out.println(
        "event-storm: "
            + events.size()
            + " Event objects, "
            + operatorEventRequests().size()
            + " event requests for "
            + pods
            + " verifications and "
            + pods
            + " failures (outage "
            + Math.round(outageSeconds)
            + " s); counts "
            + events.stream().map(e -> e.getReason() + "=" + e.getCount()).toList());
    assertThat(events)
        .extracting(Event::getReason)
        .containsExactlyInAnyOrder("PoolVerified", "ProbeFailed");
    assertThat(event("PoolVerified").getCount()).isEqualTo(pods);
    // And rate limited: per ModelDeployment, 25 writes at once, then one per 10 s
    // (EventRecorderSettings.standard),
    // for the rollout and the outage together; plus at most one create per Event and nothing
    // refused.
    long writes = operatorEventRequests().stream().filter(r -> !r.method().equals("GET")).count();
    long elapsedSeconds = Math.round(Math.ceil((System.nanoTime() - started) / 1e9));
    assertThat(writes).isLessThanOrEqualTo(25 + elapsedSeconds / 10 + 2);
    assertThat(operatorEventRequests()).allSatisfy(r -> assertThat(r.status()).isLessThan(300));

    // Every transition announced exactly once: each write's count grew by the number of pods its
    // message announces (named, or counted in "and N more"), and no pod is named twice.
    for (String reason : List.of("PoolVerified", "ProbeFailed")) {
      List<Event> versions =
          h.eventHistory().stream().filter(e -> reason.equals(e.getReason())).toList();
      int previous = 0;
      Set<String> named = new HashSet<>();
      List<String> twice = new ArrayList<>();
      for (Event version : versions) {
        int announced = announcedIn(version.getMessage(), named, twice);
        assertThat(version.getCount() - previous)
            .as("count step of %s", version.getMessage())
            .isEqualTo(announced);
        previous = version.getCount();
      }
      assertThat(previous).as(reason).isEqualTo(pods);
      assertThat(twice).as("pods announced twice for %s", reason).isEmpty();
      assertThat(named).as(reason).isNotEmpty();
    }
  }

  /** How many pods one Event message announces; adds the pods it names to {@code named}. */
  private static int announcedIn(String message, Set<String> named, List<String> twice) {
    Matcher alone = ALONE.matcher(message);
    if (alone.find()) {
      if (!named.add(alone.group(1))) {
        twice.add(alone.group(1));
      }
      return 1;
    }
    Matcher summary = SUMMARY.matcher(message);
    assertThat(summary.find()).as(message).isTrue();
    Matcher listed = LISTED.matcher(message);
    while (listed.find()) {
      if (!named.add(listed.group(1))) {
        twice.add(listed.group(1));
      }
    }
    return Integer.parseInt(summary.group(1));
  }

  @Test
  void eventsThrottledWith429NeitherDelayGatesNorStatusAndArriveWhenTheServerRecovers() {
    h = new OperatorHarness();
    AtomicBoolean throttling = new AtomicBoolean(true);
    h.api.faults(
        request ->
            throttling.get()
                    && request.getPath().startsWith(EVENTS_PATH)
                    && OperatorHarness.OPERATOR_AGENT.equals(request.getHeader("User-Agent"))
                ? new MockResponse()
                    .setResponseCode(429)
                    .setHeader("Retry-After", "1")
                    .setBody(
                        EmbeddedApiServer.status(
                            429, "TooManyRequests", "events rate limit exceeded"))
                : null);
    h.start();
    FakeEngine verified = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    FakeEngine refused = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 600_000));
    for (int i = 0; i < 30; i++) {
      h.pod("serve-" + i, SERVE, i < 10 ? verified : refused);
    }
    h.create(policy(60));

    // Every gate and the status are written as fast as without throttling: no pass waits for an
    // Event.
    await()
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").verified).isEqualTo("10/30");
              assertThat(podsWithReason("PoolTooSmall")).isEqualTo(20);
              for (PodVerdictStatus pod : h.status("glm").pods) {
                assertThat(h.gate(pod.name))
                    .hasValueSatisfying(
                        c ->
                            assertThat(c.getStatus())
                                .isEqualTo(pod.reason.equals("PoolSufficient") ? "True" : "False"));
              }
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(eventWrites("retried")).isPositive());
    assertThat(h.events()).isEmpty();
    assertThat(h.registry.scrape()).contains(KvguardMetrics.EVENT_WRITES_TOTAL + "{");

    // The server recovers: what waited is written, every transition counted once.
    throttling.set(false);
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(event("PoolTooSmall").getCount()).isEqualTo(20);
              assertThat(event("PoolVerified").getCount()).isEqualTo(10);
            });
    assertThat(eventWrites("dropped")).isZero();
  }
}

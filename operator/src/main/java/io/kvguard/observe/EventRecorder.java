package io.kvguard.observe;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes kvguard's Events so that no failure storm becomes an Event storm, and no transition goes
 * unannounced.
 *
 * <p>What client-go's {@code EventCorrelator} does ({@code tools/record/events_cache.go}, client-go
 * v0.36.3), adapted to an operator whose every event is a transition that must reach the user:
 *
 * <ul>
 *   <li>One Event object per (involved object, type, reason), under a deterministic name ({@link
 *       EventNames}). Later occurrences patch its {@code count}, {@code lastTimestamp} and {@code
 *       message} (JSON merge patch), as client-go's {@code eventLogger} does; a restarted operator
 *       or a new leader finds the object by name (create answers 409, a GET reads the count)
 *       instead of creating another.
 *   <li>A token bucket per involved object, like client-go's {@code EventSourceObjectSpamFilter}
 *       (burst 25). client-go drops what its filter refuses; here it waits and is merged into the
 *       next write, whose message then summarises every transition since the last one ({@link
 *       EventMessages}).
 *   <li>Writes happen on a thread of their own: a throttled or failing API server (429, 5xx) never
 *       delays a reconcile. A 429 pauses every Event write (Retry-After when the server sends one);
 *       failures are retried with backoff and, after {@link EventRecorderSettings#maxAttempts()},
 *       dropped; both are counted ({@code kvguard_event_writes_total}).
 * </ul>
 *
 * The client given should not retry on its own ({@link #clientWithoutRetries}); the recorder closes
 * it.
 */
public final class EventRecorder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  static final String SOURCE_COMPONENT = "kvguard";
  static final String REPORTING_COMPONENT = "kvguard.io/operator";

  /** Announcements kept for one message; beyond these a write only counts them ("and N more"). */
  private static final int MAX_HELD = 64;

  private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);

  private record SeriesKey(String uid, String type, String reason) {}

  /** What one write announces. */
  private record Batch(Series series, List<Announcement> items, int total) {}

  /**
   * One Event object: what the server holds (as far as this process knows) and what waits to be
   * written.
   */
  private static final class Series {
    final InvolvedObject object;
    final String type;
    final String reason;
    final String verb;
    final String name;

    /**
     * The count the Event has on the server after our last write; null until this process knows it.
     */
    Integer count;

    final List<Announcement> held = new ArrayList<>();
    int pending;
    int failures;
    Instant notBefore = Instant.MIN;

    /** The object is gone: the series goes as soon as nothing waits in it. */
    boolean retired;

    Series(InvolvedObject object, String type, String reason, String verb) {
      this.object = object;
      this.type = type;
      this.reason = reason;
      this.verb = verb;
      this.name = EventNames.of(object, type, reason);
    }

    void hold(List<Announcement> items, boolean first) {
      List<Announcement> room =
          items.subList(0, Math.min(items.size(), MAX_HELD - Math.min(MAX_HELD, held.size())));
      if (first) {
        held.addAll(0, room);
      } else {
        held.addAll(room);
      }
    }

    Batch take() {
      Batch batch = new Batch(this, List.copyOf(held), pending);
      held.clear();
      pending = 0;
      return batch;
    }
  }

  private final KubernetesClient client;
  private final KvguardMetrics metrics;
  private final Clock clock;
  private final String instance;
  private final EventRecorderSettings settings;
  private final ScheduledExecutorService writer;
  private final Map<SeriesKey, Series> series = new LinkedHashMap<>();

  /**
   * Objects forgotten whose write counters go once their last Event is written (on the writer
   * thread).
   */
  private final Map<String, InvolvedObject> retiredObjects = new LinkedHashMap<>();

  /**
   * UIDs of the objects forgotten last (a UID is never reused): what a pass that overlapped the
   * deletion still announces is dropped, or its series would come back, never retired, and its
   * write counters with it (issue 28 §2). Bounded, oldest first out.
   */
  private final java.util.Set<String> forgotten =
      java.util.Collections.newSetFromMap(
          new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > 10_000;
            }
          });

  private final Map<String, TokenBucket> buckets = new HashMap<>();
  private Instant pausedUntil = Instant.MIN;
  private ScheduledFuture<?> wake;
  private Instant wakeAt;

  public EventRecorder(
      KubernetesClient client,
      KvguardMetrics metrics,
      Clock clock,
      String instance,
      EventRecorderSettings settings) {
    this.client = client;
    this.metrics = metrics;
    this.clock = clock;
    this.instance = instance;
    this.settings = settings;
    this.writer =
        Executors.newSingleThreadScheduledExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "kvguard-events");
              thread.setDaemon(true);
              return thread;
            });
  }

  /**
   * The given client's configuration without fabric8's own retries (up to ten, with backoff, on the
   * calling thread): the recorder retries by itself, merging what piles up meanwhile into one
   * write, and must see a 429 at once. The recorder closes it.
   */
  public static KubernetesClient clientWithoutRetries(KubernetesClient client) {
    return new KubernetesClientBuilder()
        .withConfig(
            new ConfigBuilder(client.getConfiguration()).withRequestRetryBackoffLimit(0).build())
        .build();
  }

  /**
   * Announces transitions of one object to one reason; returns at once, the write follows on the
   * writer thread.
   *
   * @param verb what each pod did, for a message announcing several ("turned ProbeFailed",
   *     "verified")
   */
  public synchronized void announce(
      InvolvedObject object, String type, String reason, String verb, List<Announcement> items) {
    if (items.isEmpty() || writer.isShutdown() || forgotten.contains(object.uid())) {
      return;
    }
    Series s =
        series.computeIfAbsent(
            new SeriesKey(object.uid(), type, reason),
            key -> new Series(object, type, reason, verb));
    s.hold(items, false);
    s.pending += items.size();
    wakeAt(clock.instant());
  }

  /**
   * Forgets an object that is gone, once what it still has to announce is written (a policy's last
   * words, such as a pod it could not hand back, come just before it goes).
   */
  public synchronized void forget(String uid) {
    forgotten.add(uid);
    Iterator<Series> it = series.values().iterator();
    while (it.hasNext()) {
      Series s = it.next();
      if (s.object.uid().equals(uid)) {
        s.retired = true;
        retiredObjects.put(uid, s.object);
        if (s.pending == 0) {
          it.remove();
        }
      }
    }
    // The writer thread removes the object's write counters once no write of it is in flight (issue
    // 20: meters
    // must not outlive their ModelDeployment).
    wakeAt(clock.instant());
  }

  private synchronized void wakeAt(Instant at) {
    if (writer.isShutdown() || (wakeAt != null && !wakeAt.isAfter(at))) {
      return;
    }
    if (wake != null) {
      wake.cancel(false);
    }
    long delayNanos = Math.max(0, Duration.between(clock.instant(), at).toNanos());
    wakeAt = at;
    wake = writer.schedule(this::flush, delayNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * On the writer thread: writes every Event whose turn has come, then sleeps until the next one's.
   */
  private void flush() {
    List<Batch> due = new ArrayList<>();
    synchronized (this) {
      wake = null;
      wakeAt = null;
      Instant now = clock.instant();
      if (!pausedUntil.isAfter(now)) {
        for (Series s : series.values()) {
          if (s.pending > 0 && !s.notBefore.isAfter(now) && bucket(s, now).tryTake(now)) {
            due.add(s.take());
          }
        }
      }
    }
    for (Batch batch : due) {
      write(batch);
    }
    synchronized (this) {
      Instant now = clock.instant();
      Instant next = null;
      series.values().removeIf(s -> s.retired && s.pending == 0);
      retiredObjects
          .values()
          .removeIf(
              object -> {
                boolean done =
                    series.values().stream().noneMatch(s -> s.object.uid().equals(object.uid()));
                if (done) {
                  metrics.forgetEventWrites(object.namespace(), object.name());
                }
                return done;
              });
      for (Series s : series.values()) {
        if (s.pending > 0) {
          Instant at = latest(latest(s.notBefore, pausedUntil), bucket(s, now).nextTokenAt(now));
          next = next == null || at.isBefore(next) ? at : next;
        }
      }
      // A full bucket grants nothing a new one would not: forgetting it keeps memory to the objects
      // that are busy.
      buckets.values().removeIf(bucket -> bucket.full(now));
      if (next != null) {
        wakeAt(next);
      }
    }
  }

  private TokenBucket bucket(Series s, Instant now) {
    return buckets.computeIfAbsent(
        s.object.uid(), uid -> new TokenBucket(settings.burst(), settings.refill(), now));
  }

  private static Instant latest(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }

  private void write(Batch batch) {
    Series s = batch.series();
    String message = EventMessages.of(batch.total(), s.verb, batch.items());
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    try {
      String outcome = send(s, batch.total(), message, now);
      metrics.eventWrite(s.object.namespace(), s.object.name(), outcome);
      synchronized (this) {
        s.failures = 0;
      }
    } catch (RuntimeException e) {
      failed(batch, e);
    }
  }

  /** Creates the Event or adds to the one there is; returns "created" or "patched". */
  private String send(Series s, int occurrences, String message, String now) {
    if (s.count == null) {
      try {
        s.count =
            count(
                client
                    .v1()
                    .events()
                    .inNamespace(s.object.namespace())
                    .resource(newEvent(s, occurrences, message, now))
                    .create());
        return "created";
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
      // Written before this process started (another replica, or before a restart): add to its
      // count.
      Event existing =
          client.v1().events().inNamespace(s.object.namespace()).withName(s.name).get();
      if (existing == null) {
        // Deleted (event TTL) between the create and the get: a conflict of a kind; the retry
        // creates it.
        throw new KubernetesClientException(
            "Event " + s.name + " vanished between create and get", 409, null);
      }
      s.count = count(existing);
    }
    try {
      String patch =
          client
              .getKubernetesSerialization()
              .asJson(
                  Map.of(
                      "count",
                      s.count + occurrences,
                      "lastTimestamp",
                      now,
                      "message",
                      message,
                      "reportingInstance",
                      instance));
      s.count =
          count(
              client
                  .v1()
                  .events()
                  .inNamespace(s.object.namespace())
                  .resource(address(s))
                  .patch(MERGE, patch));
      return "patched";
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      // Gone: the API server keeps an Event for --event-ttl (1 h by default) after its last write.
      // Start anew.
      s.count =
          count(
              client
                  .v1()
                  .events()
                  .inNamespace(s.object.namespace())
                  .resource(newEvent(s, occurrences, message, now))
                  .create());
      return "created";
    }
  }

  private void failed(Batch batch, RuntimeException e) {
    Series s = batch.series();
    int code = e instanceof KubernetesClientException k ? k.getCode() : 0;
    // No answer (0), throttled (429), a conflict, or the server's own trouble: worth another try.
    // Anything else (403 in a terminating namespace, 422) would be refused again, as client-go's
    // recordEvent decides.
    boolean retriable = code == 0 || code == 409 || code == 429 || code >= 500;
    synchronized (this) {
      s.failures++;
      if (!retriable || s.failures >= settings.maxAttempts() || !series.containsKey(key(s))) {
        LOG.warn(
            "event dropped modeldeployment={}/{} reason={} code={} attempts={} transitions={}",
            s.object.namespace(),
            s.object.name(),
            s.reason,
            code,
            s.failures,
            batch.total());
        s.failures = 0;
        metrics.eventWrite(s.object.namespace(), s.object.name(), "dropped");
        return;
      }
      Duration delay = backoff(s.failures, e);
      Instant retryAt = clock.instant().plus(delay);
      if (code == 429) {
        // The server asks everyone to slow down, not just this Event.
        pausedUntil = latest(pausedUntil, retryAt);
      }
      s.notBefore = retryAt;
      s.hold(batch.items(), true);
      s.pending += batch.total();
      LOG.debug(
          "event write failed, retrying in {} ms modeldeployment={}/{} reason={} code={}",
          delay.toMillis(),
          s.object.namespace(),
          s.object.name(),
          s.reason,
          code);
      metrics.eventWrite(s.object.namespace(), s.object.name(), "retried");
    }
  }

  private static SeriesKey key(Series s) {
    return new SeriesKey(s.object.uid(), s.type, s.reason);
  }

  private Duration backoff(int failures, RuntimeException e) {
    Duration delay = settings.firstRetry().multipliedBy(1L << Math.min(20, failures - 1));
    if (delay.compareTo(settings.maxRetry()) > 0) {
      delay = settings.maxRetry();
    }
    if (e instanceof KubernetesClientException k && k.getStatus() != null) {
      StatusDetails details = k.getStatus().getDetails();
      if (details != null
          && details.getRetryAfterSeconds() != null
          && Duration.ofSeconds(details.getRetryAfterSeconds()).compareTo(delay) > 0) {
        delay = Duration.ofSeconds(details.getRetryAfterSeconds());
      }
    }
    return delay;
  }

  private Event newEvent(Series s, int occurrences, String message, String now) {
    return new EventBuilder()
        .withNewMetadata()
        .withName(s.name)
        .withNamespace(s.object.namespace())
        .endMetadata()
        .withInvolvedObject(s.object.reference())
        .withType(s.type)
        .withReason(s.reason)
        .withMessage(message)
        .withCount(occurrences)
        .withFirstTimestamp(now)
        .withLastTimestamp(now)
        .withNewSource()
        .withComponent(SOURCE_COMPONENT)
        .endSource()
        .withReportingComponent(REPORTING_COMPONENT)
        .withReportingInstance(instance)
        .build();
  }

  /** Only an address: given a name alone, fabric8 would GET the Event before patching it. */
  private static Event address(Series s) {
    return new EventBuilder()
        .withNewMetadata()
        .withName(s.name)
        .withNamespace(s.object.namespace())
        .endMetadata()
        .build();
  }

  private static int count(Event event) {
    return event == null || event.getCount() == null ? 1 : event.getCount();
  }

  /**
   * Stops writing; what still waits is dropped (and counted): the next leader announces from its
   * own passes.
   */
  @Override
  public void close() {
    List<Series> waiting;
    synchronized (this) {
      writer.shutdownNow();
      waiting = series.values().stream().filter(s -> s.pending > 0).toList();
    }
    for (Series s : waiting) {
      LOG.info(
          "event not written before stopping modeldeployment={}/{} reason={} transitions={}",
          s.object.namespace(),
          s.object.name(),
          s.reason,
          s.pending);
      metrics.eventWrite(s.object.namespace(), s.object.name(), "dropped");
    }
    try {
      writer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    client.close();
  }
}

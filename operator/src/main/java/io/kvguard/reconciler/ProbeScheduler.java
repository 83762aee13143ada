package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs probes off the reconcile thread: at most one in flight per pod and way of asking it ({@link
 * Key}), however many ModelDeployments select the pod. Policies that ask the same pod the same way
 * share the answer, and every policy that uses it is told when it changes. A result is kept only
 * for the process identity it was taken for. Probes queue per namespace on a {@link ProbeQueue}, so
 * a namespace's slow engines delay only that namespace.
 */
final class ProbeScheduler<T> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProbeScheduler.class);

  /**
   * One pod asked one way: {@code how} is everything that decides what the answer says (engine,
   * scheme, port, timeout, the generic probe's settings, the credentials), so equal keys get equal
   * answers.
   */
  record Key(String podUid, String how) {}

  /** Where probes wait for a thread: per tenant (namespace), taking turns. */
  @FunctionalInterface
  interface ProbeQueue {
    void submit(String tenant, Runnable task);
  }

  /** One finished probe of one engine process. */
  record Result<T>(String identity, T outcome, Instant completedAt) {
    boolean isFor(String identity) {
      return this.identity.equals(identity);
    }

    /**
     * Whether this result says nothing new after {@code earlier}: same process and figures. A
     * failure never repeats, so a failing engine keeps being retried promptly.
     */
    boolean repeats(Result<T> earlier) {
      return earlier != null
          && earlier.isFor(identity)
          && java.util.Objects.equals(earlier.outcome, outcome)
          && !(outcome instanceof io.kvguard.verdict.ProbeOutcome.Failed)
          && !(outcome instanceof io.kvguard.verdict.RejectionOutcome.Failed);
    }
  }

  /** Called on the probe thread with the figures and how long they took (for metrics). */
  interface Listener<T> {
    void probed(T outcome, Duration took);
  }

  private record Pending(long sequence, String identity) {}

  /**
   * What is known of one key: its last result, the probe in flight, and the policies to tell of a
   * change.
   */
  private record Entry<T>(Result<T> result, Pending pending, Set<ResourceID> users) {
    Entry<T> withUser(ResourceID user) {
      if (users.contains(user)) {
        return this;
      }
      Set<ResourceID> more = new HashSet<>(users);
      more.add(user);
      return new Entry<>(result, pending, Set.copyOf(more));
    }
  }

  private final ProbeQueue queue;
  private final Function<String, T> failure;
  private final Clock clock;
  private final Consumer<ResourceID> onChanged;

  /**
   * Per pod UID, per way of asking. Every change to a pod's entries happens inside a compute on its
   * UID.
   */
  private final ConcurrentMap<String, Map<String, Entry<T>>> byPod = new ConcurrentHashMap<>();

  private final AtomicLong sequence = new AtomicLong();

  ProbeScheduler(
      ProbeQueue queue, Clock clock, Function<String, T> failure, Consumer<ResourceID> onChanged) {
    this.queue = queue;
    this.failure = failure;
    this.clock = clock;
    this.onChanged = onChanged;
  }

  /**
   * The last result for {@code key}; {@code user} is told when it changes, until it forgets the
   * pod.
   */
  Optional<Result<T>> result(Key key, ResourceID user) {
    AtomicReference<Result<T>> found = new AtomicReference<>();
    byPod.computeIfPresent(
        key.podUid(),
        (uid, entries) -> {
          Entry<T> entry = entries.get(key.how());
          if (entry != null) {
            entries.put(key.how(), entry.withUser(user));
            found.set(entry.result());
          }
          return entries;
        });
    return Optional.ofNullable(found.get());
  }

  /**
   * Starts a probe unless one for the same process is already in flight for this key (the requester
   * then shares it), or a result that {@code fresh} accepts was published since the caller looked.
   * Just before it is sent, {@code stillWanted} may call it off (the pod left, or its IP changed,
   * while it waited its turn).
   */
  void request(
      Key key,
      ResourceID requester,
      String tenant,
      String identity,
      Predicate<Result<T>> fresh,
      Supplier<Optional<String>> stillWanted,
      Supplier<T> probe,
      Listener<T> listener) {
    Pending mine = new Pending(sequence.incrementAndGet(), identity);
    AtomicReference<Pending> started = new AtomicReference<>();
    byPod.compute(
        key.podUid(),
        (uid, entries) -> {
          Map<String, Entry<T>> all = entries == null ? new HashMap<>() : entries;
          Entry<T> entry =
              all.getOrDefault(key.how(), new Entry<>(null, null, Set.of())).withUser(requester);
          boolean inFlight = entry.pending() != null && entry.pending().identity().equals(identity);
          boolean upToDate =
              entry.result() != null
                  && entry.result().isFor(identity)
                  && fresh.test(entry.result());
          if (!inFlight && !(entry.pending() == null && upToDate)) {
            entry = new Entry<>(entry.result(), mine, entry.users());
            started.set(mine);
          }
          all.put(key.how(), entry);
          return all;
        });
    if (started.get() == null) {
      return;
    }
    try {
      queue.submit(tenant, () -> run(key, mine, stillWanted, probe, listener));
    } catch (RejectedExecutionException e) {
      settle(key, mine, null);
      LOG.debug("probe not scheduled, executor shut down key={}", key);
    }
  }

  private void run(
      Key key,
      Pending mine,
      Supplier<Optional<String>> stillWanted,
      Supplier<T> probe,
      Listener<T> listener) {
    if (!isPending(key, mine)) {
      return; // forgotten or superseded while it waited
    }
    Optional<String> callOff = stillWanted.get();
    if (callOff.isPresent()) {
      // The pod's own change triggers the passes that ask again, for what it is now.
      LOG.debug("probe called off key={} cause={}", key, callOff.get());
      settle(key, mine, null);
      return;
    }
    Instant started = clock.instant();
    long startNanos = System.nanoTime();
    T outcome;
    try {
      outcome = probe.get();
    } catch (RuntimeException | Error e) {
      // A probe must never throw; if one does, that is a failed probe, not a crashed scheduler. An
      // Error too (a StackOverflowError in a parser): uncaught, it would leave the probe "in
      // flight"
      // forever, and the pod would never be asked again.
      outcome = failure.apply("probe error (" + e.getClass().getSimpleName() + ")");
      LOG.warn("probe threw key={} error={}", key, e.getClass().getName());
    }
    Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
    try {
      listener.probed(outcome, took);
    } catch (RuntimeException e) {
      // Metrics and events must not keep the answer from being published: an entry left "in flight"
      // would never be probed again, and its last answer would stand for the process forever.
      LOG.warn("probe listener threw key={} error={}", key, e.toString());
    }
    Set<ResourceID> tell =
        settle(key, mine, new Result<>(mine.identity(), outcome, started.plus(took)));
    // A periodic re-probe that found the same figures needs no pass: nothing a pass computes would
    // differ, and the passes that asked for it already scheduled their next. At scale this is most
    // probe completions.
    tell.forEach(onChanged);
  }

  /**
   * Clears "in flight" and, with a result, publishes it, as one step: a pass that looks in between
   * cannot see neither and start a second probe of the same process. Only the newest request may
   * publish; an older one was superseded by a process change. Returns the policies to tell (none
   * when the answer repeats).
   */
  private Set<ResourceID> settle(Key key, Pending mine, Result<T> result) {
    AtomicReference<Set<ResourceID>> tell = new AtomicReference<>(Set.of());
    byPod.computeIfPresent(
        key.podUid(),
        (uid, entries) -> {
          Entry<T> entry = entries.get(key.how());
          if (entry != null && entry.pending() == mine) {
            if (result == null) {
              entries.put(key.how(), new Entry<>(entry.result(), null, entry.users()));
            } else {
              entries.put(key.how(), new Entry<>(result, null, entry.users()));
              if (!result.repeats(entry.result())) {
                tell.set(entry.users());
              }
            }
          }
          return entries;
        });
    return tell.get();
  }

  private boolean isPending(Key key, Pending mine) {
    java.util.concurrent.atomic.AtomicBoolean pending =
        new java.util.concurrent.atomic.AtomicBoolean();
    byPod.computeIfPresent(
        key.podUid(),
        (uid, entries) -> {
          Entry<T> entry = entries.get(key.how());
          pending.set(entry != null && entry.pending() == mine);
          return entries;
        });
    return pending.get();
  }

  /**
   * {@code user} no longer has the pod. What nobody uses any more goes, in flight first: a probe
   * finishing in between then finds no entry and publishes nothing back.
   */
  void forget(String podUid, ResourceID user) {
    byPod.computeIfPresent(podUid, (uid, entries) -> without(entries, user));
  }

  /**
   * {@code user} used the keys in {@code used} in a pass: for each of their pods it lets go of its
   * other keys (a spec edit changed how it asks, a restarted engine needs another prompt), so they
   * do not pile up. Pods the pass used no key of keep theirs: work in flight for them is not lost.
   */
  void retain(ResourceID user, Set<Key> used) {
    Set<String> podUids = new HashSet<>();
    used.forEach(key -> podUids.add(key.podUid()));
    for (String podUid : podUids) {
      byPod.computeIfPresent(
          podUid,
          (uid, entries) -> {
            entries.replaceAll(
                (how, entry) ->
                    !entry.users().contains(user) || used.contains(new Key(uid, how))
                        ? entry
                        : withoutUser(entry, user));
            entries.values().removeIf(entry -> entry.users().isEmpty());
            return entries.isEmpty() ? null : entries;
          });
    }
  }

  void forgetAll(ResourceID user) {
    for (String podUid : byPod.keySet()) {
      forget(podUid, user);
    }
  }

  /**
   * The policies some entry still tells, each entry read inside a compute on its pod as every
   * change is (for the sweep of deleted policies, and tests).
   */
  Set<ResourceID> users() {
    Set<ResourceID> users = ConcurrentHashMap.newKeySet();
    for (String podUid : byPod.keySet()) {
      byPod.computeIfPresent(
          podUid,
          (uid, entries) -> {
            entries.values().forEach(entry -> users.addAll(entry.users()));
            return entries;
          });
    }
    return users;
  }

  /** Pods with entries (tests: nothing outlives the policies that used it). */
  int size() {
    return byPod.size();
  }

  private Map<String, Entry<T>> without(Map<String, Entry<T>> entries, ResourceID user) {
    entries.replaceAll(
        (how, entry) -> entry.users().contains(user) ? withoutUser(entry, user) : entry);
    entries.values().removeIf(entry -> entry.users().isEmpty());
    return entries.isEmpty() ? null : entries;
  }

  private static <T> Entry<T> withoutUser(Entry<T> entry, ResourceID user) {
    Set<ResourceID> rest = new HashSet<>(entry.users());
    rest.remove(user);
    return new Entry<>(entry.result(), entry.pending(), Set.copyOf(rest));
  }

  @Override
  public void close() {
    if (queue instanceof AutoCloseable closeable) {
      try {
        closeable.close();
      } catch (Exception e) {
        LOG.debug("probe queue did not close cleanly: {}", e.toString());
      }
    }
  }
}

package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs probes off the reconcile thread, at most one in flight per (ModelDeployment, pod), on a bounded
 * pool. Reconciles never wait for an engine, so a slow engine cannot delay closing another pod's gate.
 * A result is kept only for the process identity and spec fingerprint it was taken for.
 */
final class ProbeScheduler<T> implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProbeScheduler.class);

  record Key(ResourceID modelDeployment, String podUid) {}

  /** One finished probe of one engine process. */
  record Result<T>(String identity, String fingerprint, long generation, T outcome, Instant completedAt) {
    boolean isFor(String identity, String fingerprint) {
      return this.identity.equals(identity) && this.fingerprint.equals(fingerprint);
    }

    /**
     * Whether this result says nothing new after {@code earlier}: same process, settings and figures. A failure
     * never repeats, so a failing engine keeps being retried promptly.
     */
    boolean repeats(Result<T> earlier) {
      return earlier != null && earlier.isFor(identity, fingerprint) && earlier.generation == generation
          && java.util.Objects.equals(earlier.outcome, outcome) && !(outcome instanceof io.kvguard.verdict.ProbeOutcome.Failed)
          && !(outcome instanceof io.kvguard.verdict.RejectionOutcome.Failed);
    }
  }

  /** Called on the probe thread with the figures and how long they took (for metrics). */
  interface Listener<T> {
    void probed(T outcome, Duration took);
  }

  private record Pending(long sequence, String identity, String fingerprint, long generation) {}

  private final ExecutorService executor;
  private final Function<String, T> failure;
  private final Clock clock;
  private final Consumer<ResourceID> onFinished;
  private final ConcurrentMap<Key, Result<T>> results = new ConcurrentHashMap<>();
  private final ConcurrentMap<Key, Pending> pending = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();

  ProbeScheduler(ExecutorService executor, Clock clock, Function<String, T> failure, Consumer<ResourceID> onFinished) {
    this.executor = executor;
    this.failure = failure;
    this.clock = clock;
    this.onFinished = onFinished;
  }

  Optional<Result<T>> result(Key key) {
    return Optional.ofNullable(results.get(key));
  }


  /**
   * Starts a probe unless one for the same process and fingerprint is already running, or a result that
   * {@code fresh} accepts was published since the caller looked (a probe may have finished in between).
   */
  void request(Key key, String identity, String fingerprint, long generation, Predicate<Result<T>> fresh,
      Supplier<T> probe, Listener<T> listener) {
    Pending mine = new Pending(sequence.incrementAndGet(), identity, fingerprint, generation);
    Pending previous = pending.compute(key, (k, current) -> {
      if (current != null && current.identity.equals(identity) && current.fingerprint.equals(fingerprint)) {
        return current;
      }
      Result<T> latest = results.get(k);
      boolean upToDate = latest != null && latest.isFor(identity, fingerprint) && fresh.test(latest);
      return current == null && upToDate ? null : mine;
    });
    if (previous != mine) {
      return;
    }
    try {
      executor.execute(() -> run(key, mine, probe, listener));
    } catch (RejectedExecutionException e) {
      pending.remove(key, mine);
      LOG.debug("probe not scheduled, executor shut down key={}", key);
    }
  }

  private void run(Key key, Pending mine, Supplier<T> probe, Listener<T> listener) {
    Instant started = clock.instant();
    long startNanos = System.nanoTime();
    T outcome;
    try {
      outcome = probe.get();
    } catch (RuntimeException e) {
      // A probe must never throw; if one does, that is a failed probe, not a crashed scheduler.
      outcome = failure.apply("probe error (" + e.getClass().getSimpleName() + ")");
      LOG.warn("probe threw key={} error={}", key, e.getClass().getName());
    }
    Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
    try {
      listener.probed(outcome, took);
    } catch (RuntimeException e) {
      // Metrics and events must not keep the answer from being published: an entry left "in flight" would
      // never be probed again, and its last answer would stand for the process forever.
      LOG.warn("probe listener threw key={} error={}", key, e.toString());
    }
    // Only the newest request for this key may publish; an older one was superseded by a process change.
    // Publishing and clearing "in flight" is one step under the key's lock, so a pass that looks in between
    // cannot see neither and start a second probe of the same process.
    Result<T> result = new Result<>(mine.identity, mine.fingerprint, mine.generation, outcome, started.plus(took));
    AtomicBoolean changed = new AtomicBoolean();
    pending.computeIfPresent(key, (k, current) -> {
      if (current != mine) {
        return current;
      }
      changed.set(!result.repeats(results.put(k, result)));
      return null;
    });
    // A periodic re-probe that found the same figures needs no pass: nothing a pass computes would differ, and
    // the pass that asked for it already scheduled the next one. At scale this is most probe completions.
    if (changed.get()) {
      onFinished.accept(key.modelDeployment());
    }
  }

  // "In flight" goes first: a probe finishing in between then finds no entry and publishes nothing back.
  void forget(Key key) {
    pending.remove(key);
    results.remove(key);
  }

  void forgetAll(ResourceID modelDeployment) {
    pending.keySet().removeIf(key -> key.modelDeployment().equals(modelDeployment));
    results.keySet().removeIf(key -> key.modelDeployment().equals(modelDeployment));
  }



  @Override
  public void close() {
    executor.shutdownNow();
  }
}

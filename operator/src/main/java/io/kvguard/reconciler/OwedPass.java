package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The event a policy is owed after a deletion's pass of its name (see {@code
 * ModelDeploymentReconciler.passOwedAfterDeletion}): given once the deletion's scope has surely
 * ended, and again, at twice the wait each time, while the policy the cache holds under the name
 * still has had no pass of its own. The first event is lost if the deletion's thread stalls past
 * the first wait before JOSDK ends the scope (JOSDK v5.2.3 drops it with the scope's state); the
 * repeats make such a stall have to outlast every wait (1 + 2 + 4 + 8 + 16 s by default) for the
 * policy to be left without a pass.
 *
 * <p>A pass of its own is one outside a deletion's scope ({@link #passStarted}). The deletion's
 * pass itself may be handed the policy created again under the name and run an ordinary pass of it;
 * that pass does not count: JOSDK drops its reschedule and every event that came meanwhile (the
 * probes' answers) with the name's state (operator-framework/java-operator-sdk v5.2.3,
 * EventProcessor.eventProcessingFinished: {@code cleanupForDeletedEvent} when {@code
 * executionScope.isDeleteEvent()}), so nothing but these events brings that policy another pass.
 */
final class OwedPass {
  /**
   * Per name whose events are still to come: how many deletions' events, and the UID of the policy
   * that has had a pass of its own since the last of those deletions' passes ended (null: none).
   */
  private record Owed(int deletions, String passedUid) {}

  private final ConcurrentMap<ResourceID, Owed> owed = new ConcurrentHashMap<>();
  private final ScheduledExecutorService timer;
  private final Function<ResourceID, Optional<ModelDeployment>> cached;
  private final Consumer<ModelDeployment> send;
  private final Duration firstWait;
  private final int events;

  /**
   * @param events how many events at most, the first included
   */
  OwedPass(
      ScheduledExecutorService timer,
      Function<ResourceID, Optional<ModelDeployment>> cached,
      Consumer<ModelDeployment> send,
      Duration firstWait,
      int events) {
    this.timer = timer;
    this.cached = cached;
    this.send = send;
    this.firstWait = firstWait;
    this.events = events;
  }

  /**
   * A pass of {@code md} (not one handing it back) is starting.
   *
   * @param inDeletionScope JOSDK runs it for a deletion of the name: it ends the name's state
   */
  void passStarted(ModelDeployment md, boolean inDeletionScope) {
    if (inDeletionScope) {
      return;
    }
    owed.computeIfPresent(
        ResourceID.fromResource(md),
        (name, now) -> new Owed(now.deletions(), md.getMetadata().getUid()));
  }

  /** A deletion's pass of {@code name} ended (or is ending) on this thread. */
  void deletionPassEnded(ResourceID name) {
    // Any pass before this one's end ran under the state JOSDK is dropping: it counts for nothing.
    owed.merge(name, new Owed(1, null), (now, one) -> new Owed(now.deletions() + 1, null));
    if (!schedule(name, firstWait, events, true)) {
      done(name);
    }
  }

  /** Names whose events are still to come (tests). */
  java.util.Set<ResourceID> names() {
    return java.util.Set.copyOf(owed.keySet());
  }

  private boolean hadPass(ResourceID name, ModelDeployment policy) {
    Owed now = owed.get(name);
    String uid = policy.getMetadata().getUid();
    return now != null && uid != null && uid.equals(now.passedUid());
  }

  private void done(ResourceID name) {
    owed.computeIfPresent(
        name,
        (key, now) -> now.deletions() <= 1 ? null : new Owed(now.deletions() - 1, now.passedUid()));
  }

  /** Whether the event was scheduled (false: the operator is stopping; no pass follows anyway). */
  private boolean schedule(ResourceID name, Duration wait, int left, boolean first) {
    try {
      timer.schedule(
          () -> {
            boolean more = false;
            try {
              Optional<ModelDeployment> policy = cached.apply(name);
              // A policy being deleted is owed its pass too: only a pass releases kvguard's
              // finalizer. One that had a pass of its own is owed nothing more.
              if (policy.isEmpty()
                  || (!first
                      && !policy.get().isMarkedForDeletion()
                      && hadPass(name, policy.get()))) {
                return;
              }
              send.accept(policy.get());
              if (left > 1) {
                more = schedule(name, wait.multipliedBy(2), left - 1, false);
              }
            } finally {
              if (!more) {
                done(name);
              }
            }
          },
          wait.toMillis(),
          TimeUnit.MILLISECONDS);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }
}

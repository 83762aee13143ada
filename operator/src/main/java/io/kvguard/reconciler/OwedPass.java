package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The event a policy is owed after a deletion's pass of its name (see {@code
 * ModelDeploymentReconciler.passOwedAfterDeletion}): given once the deletion's scope has surely
 * ended, and again, at twice the wait each time, while the policy the cache holds under the name
 * still has had no pass. The first event is lost if the deletion's thread stalls past the first
 * wait before JOSDK ends the scope (JOSDK v5.2.3 drops it with the scope's state); the repeats make
 * such a stall have to outlast every wait (1 + 2 + 4 + 8 + 16 s by default) for the policy to be
 * left without a pass.
 */
final class OwedPass {
  private final ScheduledExecutorService timer;
  private final Function<ResourceID, Optional<ModelDeployment>> cached;
  private final Predicate<ModelDeployment> hadPass;
  private final Consumer<ModelDeployment> send;
  private final Duration firstWait;
  private final int events;

  /**
   * @param hadPass whether a pass of this very policy (its UID) has started since
   * @param events how many events at most, the first included
   */
  OwedPass(
      ScheduledExecutorService timer,
      Function<ResourceID, Optional<ModelDeployment>> cached,
      Predicate<ModelDeployment> hadPass,
      Consumer<ModelDeployment> send,
      Duration firstWait,
      int events) {
    this.timer = timer;
    this.cached = cached;
    this.hadPass = hadPass;
    this.send = send;
    this.firstWait = firstWait;
    this.events = events;
  }

  /** A deletion's pass of {@code name} ended (or is ending) on this thread. */
  void deletionPassEnded(ResourceID name) {
    schedule(name, firstWait, events, true);
  }

  private void schedule(ResourceID name, Duration wait, int left, boolean first) {
    try {
      timer.schedule(
          () -> {
            Optional<ModelDeployment> policy = cached.apply(name);
            // A policy being deleted is owed its pass too: only a pass releases kvguard's
            // finalizer. One that had a pass of its own is owed nothing more.
            if (policy.isEmpty()
                || (!first && !policy.get().isMarkedForDeletion() && hadPass.test(policy.get()))) {
              return;
            }
            send.accept(policy.get());
            if (left > 1) {
              schedule(name, wait.multipliedBy(2), left - 1, false);
            }
          },
          wait.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The operator is stopping: no pass follows anyway.
    }
  }
}

package io.kvguard;

import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.processing.Controller;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.reconciler.ModelDeploymentReconciler;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lists the pods of every namespace that holds a ModelDeployment while the lease is still being
 * acquired, so the first pass finds them cached instead of listing them itself (issue 28 §5).
 *
 * <p>Why here and not in JOSDK: with leader election, {@code Operator.start()} starts the
 * ModelDeployment informer, waits for its sync, then asks for a SelfSubjectRulesReview, starts the
 * elector and returns; the first pass runs only once the lease is held (java-operator-sdk v5.2.3,
 * {@code Operator.start}, {@code ControllerManager.start(false)}, {@code
 * LeaderElectionManager.start} and its {@code checkLeaseAccess}). JOSDK has no hook between the
 * sync and the review, so the warm-up starts beside {@code Operator.start()} and watches the
 * ModelDeployment informer's health until it has synced and watches: the pods are then listed while
 * the review and the lease are answered, not after the review. The pod informers are registered by
 * passes ({@code PodCache}), so before this their LIST and WATCH came after the lease, in series.
 * An informer writes nothing, so a replica that does not lead may hold one: every replica now
 * caches the pods of the namespaces with a ModelDeployment, and a follower that takes over starts
 * from a warm cache. The cost is the same memory and one pod WATCH per namespace on each replica
 * (docs/architecture.md).
 *
 * <p>The namespaces are listed one by one in the order the pass would ({@code
 * KVGUARD_POD_LIST_CONCURRENCY} still bounds how many list at once); a pass arriving meanwhile
 * waits for its namespace's LIST instead of starting another. A LIST that fails here is only
 * logged: the pass lists again, and retries, as before.
 */
final class PodCacheWarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(PodCacheWarmUp.class);

  private PodCacheWarmUp() {}

  /** How often the warm-up looks whether the ModelDeployment informer has synced. */
  private static final long SYNC_POLL_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5);

  /**
   * Starts the warm-up on a thread of its own; returns at once. It waits until the ModelDeployment
   * informer has synced (or {@code started} says {@code Operator.start()} returned, which JOSDK
   * does only after the sync, or failed) and then lists the pods.
   */
  static Thread start(
      RegisteredController<ModelDeployment> registered,
      ModelDeploymentReconciler reconciler,
      AtomicBoolean stopping,
      java.util.function.BooleanSupplier started) {
    // JOSDK's public RegisteredController does not expose the event sources; the instance register
    // returns is its Controller (v5.2.3, Operator.register), whose EventSourceManager is what a
    // pass's Context hands PodCache.
    Controller<ModelDeployment> controller = (Controller<ModelDeployment>) registered;
    Thread thread =
        new Thread(
            () -> {
              try {
                while (!synced(controller) && !started.getAsBoolean() && !stopping.get()) {
                  java.util.concurrent.locks.LockSupport.parkNanos(SYNC_POLL_NANOS);
                }
                // Operator.start() returned without the informer running: it failed, and says so.
                if (stopping.get() || !synced(controller)) {
                  return;
                }
                int namespaces = reconciler.cachePodsAhead(controller.getEventSourceManager());
                LOG.info("cached the pods of {} namespace(s) before the first pass", namespaces);
              } catch (RuntimeException e) {
                if (!stopping.get()) {
                  LOG.warn("could not cache pods before the first pass; the pass lists them", e);
                }
              }
            },
            "kvguard-pod-cache-warm-up");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /**
   * Whether the ModelDeployment informers have listed and watch: JOSDK marks the controller's event
   * source running only once every informer it holds has started (v5.2.3, {@code
   * ManagedInformerEventSource.start}: {@code manager().start()}, which waits for each informer's
   * start, then {@code super.start()}, which sets it running).
   */
  private static boolean synced(Controller<ModelDeployment> controller) {
    return controller.getEventSourceManager().getControllerEventSource().isRunning();
  }
}

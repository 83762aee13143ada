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
 * ModelDeployment informer, waits for its sync, then starts the elector and returns; the first pass
 * runs only once the lease is held (java-operator-sdk v5.2.3, {@code Operator.start}, {@code
 * ControllerManager.start(false)}, {@code LeaderElectionManager.start}). The pod informers are
 * registered by passes ({@code PodCache}), so before this their LIST and WATCH came after the
 * lease, in series. An informer writes nothing, so a replica that does not lead may hold one: every
 * replica now caches the pods of the namespaces with a ModelDeployment, and a follower that takes
 * over starts from a warm cache. The cost is the same memory and one pod WATCH per namespace on
 * each replica (docs/architecture.md).
 *
 * <p>The namespaces are listed one by one in the order the pass would ({@code
 * KVGUARD_POD_LIST_CONCURRENCY} still bounds how many list at once); a pass arriving meanwhile
 * waits for its namespace's LIST instead of starting another. A LIST that fails here is only
 * logged: the pass lists again, and retries, as before.
 */
final class PodCacheWarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(PodCacheWarmUp.class);

  private PodCacheWarmUp() {}

  /** Starts the warm-up on a thread of its own; returns at once. */
  static Thread start(
      RegisteredController<ModelDeployment> registered,
      ModelDeploymentReconciler reconciler,
      AtomicBoolean stopping) {
    // JOSDK's public RegisteredController does not expose the event sources; the instance register
    // returns is its Controller (v5.2.3, Operator.register), whose EventSourceManager is what a
    // pass's Context hands PodCache.
    Controller<ModelDeployment> controller = (Controller<ModelDeployment>) registered;
    Thread thread =
        new Thread(
            () -> {
              try {
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
}

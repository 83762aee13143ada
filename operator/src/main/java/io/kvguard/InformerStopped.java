package io.kvguard;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.DefaultSharedIndexInformer;
import io.javaoperatorsdk.operator.api.config.InformerStoppedHandler;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the replica does when one of its informers stops. JOSDK's own handler (v5.2.3, {@code
 * ConfigurationService.getInformerStoppedHandler}) calls {@code System.exit(1)} for any informer
 * that stops with an error after it had synced, and from the informer's own thread (fabric8's
 * Vert.x event loop). Two things are wrong with that for kvguard:
 *
 * <ul>
 *   <li>A replica that is stopping closes its client, and a pod informer that a pass was starting
 *       at that moment (its LIST answered, its WATCH not yet open) stops with "Client is closed":
 *       an orderly stop then ended with exit status 1 (and a test's JVM with it).
 *   <li>Exiting from the event loop runs the shutdown hook, which stops the operator and waits on
 *       that same loop; the same reason the lost lease exits from a thread of its own.
 * </ul>
 *
 * So: while the replica stops, an informer stopping is expected and only logged. Otherwise an
 * informer that had started and then stopped with an error is gone for good (its pods or policies
 * no longer seen): the replica can no longer trust what it holds and steps down as on a lost lease
 * ({@code stepDown}: exit in production, so Kubernetes restarts it and another replica leads
 * meanwhile). After its start, fabric8 (v7.5.2, {@code Reflector}) retries a refused or failed
 * WATCH and a failed relist by itself, for ever; what stops it is a {@code WatcherException}: a
 * watch event it cannot read, a watch response it cannot process, a reconnect that throws.
 *
 * <p>An informer whose start failed is not a step-down: whoever started it hears of it (JOSDK's
 * {@code InformerWrapper.start} throws), so {@code Operator.start} fails (and {@code OperatorMain}
 * exits), or a pass's {@code PodCache} start fails and the pass is retried. {@code hasSynced()}
 * does not tell the two apart: it turns true once the first LIST is stored, before the first WATCH
 * opens (v7.5.2, {@code SharedIndexInformer.hasSynced}, {@code Reflector.listSyncAndWatch}).
 *
 * <p>An informer stopped without an error was stopped on purpose (fabric8 completes {@code
 * stopped()} normally only from {@code stop()}; JOSDK calls it when it stops or deregisters an
 * event source, as {@code PodCache} does for a namespace without ModelDeployments or one it lists
 * again).
 */
final class InformerStopped implements InformerStoppedHandler {
  private static final Logger LOG = LoggerFactory.getLogger(InformerStopped.class);

  private final BooleanSupplier stopping;
  private final Runnable stepDown;

  InformerStopped(BooleanSupplier stopping, Runnable stepDown) {
    this.stopping = stopping;
    this.stepDown = stepDown;
  }

  @Override
  @SuppressWarnings("rawtypes") // JOSDK 5.2.3's InformerStoppedHandler takes the raw type
  public void onStop(SharedIndexInformer informer, Throwable error) {
    if (stopping.getAsBoolean()) {
      LOG.info(
          "informer {} stopped while kvguard stops{}", informer, error == null ? "" : ": " + error);
      return;
    }
    if (error == null) {
      LOG.info("informer {} stopped", informer);
      return;
    }
    if (hadStarted(informer)) {
      LOG.error("informer {} stopped for good; stepping down", informer, error);
      stepDown.run();
      return;
    }
    LOG.warn(
        "informer {} failed to start (synced: {}); its start fails with it: {}",
        informer,
        informer.hasSynced(),
        error.toString());
  }

  /**
   * Whether the informer's start had completed (listed and watching) before it stopped. fabric8's
   * informer (the one JOSDK's {@code InformerManager} builds, {@code runnableInformer}) completes
   * its start future exceptionally before its stop future when a start fails, and leaves a
   * completed start as it was (v7.5.2, {@code Reflector.onException}). Another kind of informer is
   * judged by {@code hasSynced()}, which errs towards stepping down.
   */
  @SuppressWarnings("rawtypes")
  private static boolean hadStarted(SharedIndexInformer informer) {
    if (informer instanceof DefaultSharedIndexInformer<?, ?> fabric8) {
      CompletableFuture<Void> started = fabric8.started();
      return started.isDone() && !started.isCompletedExceptionally();
    }
    return informer.hasSynced();
  }
}

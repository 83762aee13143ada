package io.kvguard;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.config.InformerStoppedHandler;
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
 *   <li>A replica that is stopping closes its client, and a pod informer whose watch was being
 *       re-established at that moment stops with "Client is closed": an orderly stop then ended
 *       with exit status 1 (and a test's JVM with it).
 *   <li>Exiting from the event loop runs the shutdown hook, which stops the operator and waits on
 *       that same loop; the same reason the lost lease exits from a thread of its own.
 * </ul>
 *
 * So: while the replica stops, an informer stopping is expected and only logged. Otherwise an
 * informer that stopped for good after syncing (its pods or policies no longer seen) is a replica
 * that can no longer trust what it holds: it steps down as on a lost lease ({@code stepDown}: exit
 * in production, so Kubernetes restarts it and another replica leads meanwhile). An informer that
 * stops before it synced is a start-up failure, which JOSDK reports through {@code Operator.start}.
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
    if (error != null && informer.hasSynced()) {
      LOG.error("informer {} stopped for good; stepping down", informer, error);
      stepDown.run();
      return;
    }
    LOG.warn(
        "informer {} stopped (synced: {}){}",
        informer,
        informer.hasSynced(),
        error == null ? "" : ": " + error);
  }
}

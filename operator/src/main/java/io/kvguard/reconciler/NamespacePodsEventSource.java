package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.LifecycleAware;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvguard.customresource.ModelDeployment;
import java.util.function.Consumer;

/**
 * The JOSDK event source of one namespace's pod informer ({@link PodCache}), which stops its
 * informers whenever it is stopped, whether or not it ever ran, and never starts once stopped.
 *
 * <p>JOSDK v5.2.3 (operator-framework/java-operator-sdk, {@code
 * operator-framework-core/src/main/java/io/javaoperatorsdk/operator/processing/event/source/informer/ManagedInformerEventSource.java})
 * stops an informer event source only while it runs: {@code stop()} returns at once when {@code
 * isRunning()} is false, and {@code start()} creates the {@code InformerManager}, starts its
 * informers ({@code manager().start()}) and only then sets it running ({@code super.start()}). A
 * fabric8 informer whose start fails (its first WATCH refused after its LIST) makes {@code
 * InformerWrapper.start} throw, so the source never runs, and JOSDK stops its informer neither when
 * it is deregistered ({@code EventSourceManager.dynamicallyDeRegisterEventSource} calls {@code
 * stop()}) nor when the operator stops ({@code EventSourceManager.stop}). fabric8 v7.5.2
 * (fabric8io/kubernetes-client, {@code
 * kubernetes-client/src/main/java/io/fabric8/kubernetes/client/informers/impl/cache/Reflector.java})
 * schedules the watch's periodic close on {@code Utils.SHARED_SCHEDULER} in {@code startWatcher},
 * once the LIST is stored and before the WATCH is answered; it reschedules itself every 5 to 10
 * minutes, holds the Reflector and so the informer's whole store, and only {@code
 * Reflector.stopWatcher} ({@code stop()}, from {@code DefaultSharedIndexInformer.stop}) cancels it:
 * a refused WATCH only completes the start and stop futures ({@code onException}). So every refused
 * start kept its LIST for as long as the replica ran.
 */
final class NamespacePodsEventSource extends InformerEventSource<Pod, ModelDeployment> {

  /** Set by the first {@link #stop()}: a start after it refuses. */
  private boolean stopped;

  /** Told of each stop (PodCache forgets the source then). */
  private final Consumer<NamespacePodsEventSource> onStop;

  NamespacePodsEventSource(
      InformerEventSourceConfiguration<Pod> configuration,
      EventSourceContext<ModelDeployment> context) {
    this(configuration, context, source -> {});
  }

  NamespacePodsEventSource(
      InformerEventSourceConfiguration<Pod> configuration,
      EventSourceContext<ModelDeployment> context,
      Consumer<NamespacePodsEventSource> onStop) {
    super(configuration, context);
    this.onStop = onStop;
  }

  /**
   * Refuses to start once stopped. JOSDK v5.2.3 {@code
   * EventSourceManager.dynamicallyRegisterEventSource} registers a source under the manager's lock
   * and starts it after releasing it, so the operator's stop ({@code EventSourceManager.stop},
   * under the same lock) can reach a registered source before its start: {@code stop()} then found
   * it not running and did nothing, and the start that followed ran an informer nobody would stop.
   */
  @Override
  public synchronized void start() {
    if (stopped) {
      throw new OperatorException(
          "the pod informer " + name() + " was stopped before it started (the operator stops)");
    }
    super.start();
  }

  /** JOSDK's stop, then its informers' whether or not it ran. */
  @Override
  public synchronized void stop() {
    stopped = true;
    try {
      super.stop();
    } finally {
      stopInformers();
      onStop.accept(this);
    }
  }

  /**
   * Stops every informer of this source, whether its start succeeded, failed, or never began; never
   * throws. JOSDK v5.2.3 creates the {@code InformerManager} in {@code start()} before it starts
   * any informer ({@code manager()} is null until then: nothing to stop); {@code
   * InformerManager.stop} stops each {@code InformerWrapper} (fabric8's {@code
   * DefaultSharedIndexInformer.stop}), logs what one throws, and forgets them, so a second call
   * does nothing. fabric8 v7.5.2's {@code DefaultSharedIndexInformer.stop} is safe on an informer
   * that never started or that stopped itself ({@code Reflector.stop} completes its futures and
   * cancels what is scheduled).
   */
  synchronized void stopInformers() {
    // InformerManager is package-private in JOSDK; LifecycleAware is the public interface it
    // implements (v5.2.3: class InformerManager implements LifecycleAware, IndexerResourceCache).
    Object manager = manager();
    if (manager instanceof LifecycleAware informers) {
      informers.stop();
    }
  }
}

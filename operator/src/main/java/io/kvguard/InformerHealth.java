package io.kvguard;

import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.health.EventSourceHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The replica's event sources as JOSDK reports them (v5.2.3, {@code ControllerHealthInfo}: a raw
 * map whose values are the event sources themselves), per namespace where they wrap informers.
 */
final class InformerHealth {
  private InformerHealth() {}

  /** An informer of the controller: the kind of resource it caches, and its namespace. */
  record Informer(Class<?> type, String namespace) {}

  /**
   * The informers not watching now, of every kind: the ModelDeployments' and each namespace's pods'
   * ({@code PodCache}). A source registered and not yet started is left out: JOSDK v5.2.3 ({@code
   * ManagedInformerEventSource.informerHealthIndicators}) reads its {@code InformerManager}, null
   * until {@code start()}.
   */
  static Set<Informer> notWatching(RegisteredController<?> controller) {
    Set<Informer> informers = new HashSet<>();
    for (InformerWrappingEventSourceHealthIndicator<?> source :
        controller.getControllerHealthInfo().informerEventSourceHealthIndicators().values()) {
      if (!(source instanceof EventSource<?, ?> eventSource)) {
        continue;
      }
      Map<String, InformerHealthIndicator> indicators;
      try {
        indicators = source.informerHealthIndicators();
      } catch (RuntimeException e) {
        continue;
      }
      for (InformerHealthIndicator informer : indicators.values()) {
        if (!informer.isWatching()) {
          informers.add(new Informer(eventSource.resourceType(), informer.getTargetNamespace()));
        }
      }
    }
    return informers;
  }

  /**
   * JOSDK's {@code RuntimeInfo.allEventSourcesAreHealthy} for one controller, except that an
   * informer {@code excused} names does not count. JOSDK v5.2.3's rules: a source counts when
   * UNHEALTHY (one that does not report is UNKNOWN, {@code EventSource.getStatus}), and a source
   * wrapping informers is UNHEALTHY when any of its informers is anything but HEALTHY ({@code
   * InformerWrappingEventSourceHealthIndicator.getStatus}).
   */
  static boolean healthy(RegisteredController<?> controller, Predicate<Informer> excused) {
    for (Object source :
        controller.getControllerHealthInfo().eventSourceHealthIndicators().values()) {
      if (source instanceof InformerWrappingEventSourceHealthIndicator<?> informers
          && source instanceof EventSource<?, ?> eventSource) {
        for (InformerHealthIndicator informer : informers.informerHealthIndicators().values()) {
          if (informer.getStatus() != Status.HEALTHY
              && !excused.test(
                  new Informer(eventSource.resourceType(), informer.getTargetNamespace()))) {
            return false;
          }
        }
      } else if (((EventSourceHealthIndicator) source).getStatus() == Status.UNHEALTHY) {
        return false;
      }
    }
    return true;
  }
}

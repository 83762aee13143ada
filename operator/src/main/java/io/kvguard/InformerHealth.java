package io.kvguard;

import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.health.EventSourceHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.health.InformerWrappingEventSourceHealthIndicator;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The replica's event sources as JOSDK reports them (v5.2.3, {@code ControllerHealthInfo}: a raw
 * map whose values are the event sources themselves), per namespace where they wrap informers.
 */
final class InformerHealth {
  private InformerHealth() {}

  /** Namespaces where an informer of {@code type} is not watching now. */
  static Set<String> notWatching(RegisteredController<?> controller, Class<?> type) {
    Set<String> namespaces = new TreeSet<>();
    for (Object source :
        controller.getControllerHealthInfo().informerEventSourceHealthIndicators().values()) {
      if (source instanceof EventSource<?, ?> eventSource
          && eventSource.resourceType() == type
          && source instanceof InformerWrappingEventSourceHealthIndicator<?> informers) {
        for (InformerHealthIndicator informer : informers.informerHealthIndicators().values()) {
          if (!informer.isWatching()) {
            namespaces.add(informer.getTargetNamespace());
          }
        }
      }
    }
    return namespaces;
  }

  /**
   * JOSDK's {@code RuntimeInfo.allEventSourcesAreHealthy} for one controller (only UNHEALTHY
   * counts: a source that does not report is UNKNOWN), except that an informer of a namespace
   * {@code excused} names does not count.
   */
  static boolean healthy(RegisteredController<?> controller, Predicate<String> excused) {
    for (Object source :
        controller.getControllerHealthInfo().eventSourceHealthIndicators().values()) {
      if (source instanceof InformerWrappingEventSourceHealthIndicator<?> informers) {
        for (InformerHealthIndicator informer : informers.informerHealthIndicators().values()) {
          if (informer.getStatus() == Status.UNHEALTHY
              && !excused.test(informer.getTargetNamespace())) {
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

package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.verdict.ProbeOutcome;
import java.util.Set;

/** Turns "a probe finished" into a reconcile of the ModelDeployment that asked for it. */
final class ProbeEventSource extends AbstractEventSource<ProbeOutcome, ModelDeployment> {

  ProbeEventSource() {
    super(ProbeOutcome.class, "probe-completions");
  }

  void probeFinished(ResourceID modelDeployment) {
    EventHandler handler = getEventHandler();
    if (handler != null && isRunning()) {
      handler.handleEvent(new Event(modelDeployment));
    }
  }

  @Override
  public Set<ProbeOutcome> getSecondaryResources(ModelDeployment primary) {
    return Set.of();
  }
}

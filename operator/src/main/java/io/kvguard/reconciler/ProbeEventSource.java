package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
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

  /**
   * The policy needs a pass although JOSDK keeps no state for its name: only a resource event makes
   * JOSDK create that state again (v5.2.3 {@code ResourceStateManager.getOrCreateOnResourceEvent}
   * drops any other event of a name it keeps no state for), as the policy's own watch event would.
   */
  void policyNeedsPass(ModelDeployment policy) {
    EventHandler handler = getEventHandler();
    if (handler != null && isRunning()) {
      handler.handleEvent(
          new ResourceEvent(ResourceAction.UPDATED, ResourceID.fromResource(policy), policy));
    }
  }

  @Override
  public Set<ProbeOutcome> getSecondaryResources(ModelDeployment primary) {
    return Set.of();
  }
}

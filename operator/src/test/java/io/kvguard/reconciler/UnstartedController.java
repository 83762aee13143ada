package io.kvguard.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.kvguard.customresource.ModelDeployment;

/**
 * A JOSDK controller of ModelDeployments, registered and never started: the pod-cache tests
 * register and start namespace informers through its event source manager, as PodCache does through
 * the running operator's.
 */
final class UnstartedController {
  private UnstartedController() {}

  private static final class NoPasses implements Reconciler<ModelDeployment> {
    @Override
    public UpdateControl<ModelDeployment> reconcile(
        ModelDeployment resource, Context<ModelDeployment> context) {
      return UpdateControl.noUpdate();
    }
  }

  @SuppressWarnings("unchecked")
  static EventSourceManager<ModelDeployment> eventSources(KubernetesClient client) {
    Operator operator =
        new Operator(
            o ->
                o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    .withUseSSAToPatchPrimaryResource(false)
                    // JOSDK's own handler (v5.2.3) exits the JVM when an informer stops with an
                    // error; a pod informer whose start fails is heard by its start, as kvguard's
                    // InformerStopped leaves it.
                    .withInformerStoppedHandler((informer, error) -> {}));
    return ((Controller<ModelDeployment>) operator.register(new NoPasses()))
        .getEventSourceManager();
  }
}

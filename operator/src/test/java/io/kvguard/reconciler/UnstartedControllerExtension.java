package io.kvguard.reconciler;

import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For each test: an embedded API server, its client and an {@link UnstartedController}'s event
 * sources, through which the test starts {@link OperatorHarness#NAMESPACE}'s pod informer as
 * PodCache does; its informers are deregistered (and stopped) after the test. Runs before the test
 * class's own {@code @BeforeEach} methods, which may create pods.
 */
final class UnstartedControllerExtension implements BeforeEachCallback, AfterEachCallback {
  private EmbeddedApiServer api;
  private NamespacedKubernetesClient client;
  private EventSourceManager<ModelDeployment> sources;

  @Override
  public void beforeEach(ExtensionContext context) {
    api = new EmbeddedApiServer();
    client = api.client();
    sources = UnstartedController.eventSources(client);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    String name = PodCache.SOURCE_PREFIX + OperatorHarness.NAMESPACE;
    sources.dynamicallyDeRegisterEventSource(name);
    sources.dynamicallyDeRegisterEventSource(name + PodCache.RELIST_SUFFIX);
    client.close();
    api.close();
  }

  EmbeddedApiServer api() {
    return api;
  }

  NamespacedKubernetesClient client() {
    return client;
  }

  EventSourceManager<ModelDeployment> sources() {
    return sources;
  }
}

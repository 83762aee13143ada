package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A pod informer already registered under the name a namespace's start picks: JOSDK v5.2.3 {@code
 * EventSourceManager.dynamicallyRegisterEventSource} then starts and returns that one, and never
 * starts the new one, whose store PodCache would have read as the namespace's: empty, every pod
 * unseen. The start fails instead, the stray informer is deregistered, and the next pass caches the
 * namespace.
 */
class PodCacheStrayInformerTest {
  private static final String NS = OperatorHarness.NAMESPACE;

  @RegisterExtension
  final UnstartedControllerExtension cluster = new UnstartedControllerExtension();

  private NamespacedKubernetesClient client;
  private EventSourceManager<ModelDeployment> sources;

  @BeforeEach
  void start() {
    client = cluster.client();
    sources = cluster.sources();
    client.pods().inNamespace(NS).resource(ServeRole.pod("engine-0")).create();
  }

  @Test
  void aStrayInformerUnderTheNamespacesNameIsReplacedNotReadAsItsCache() {
    // An informer of another namespace's pods, registered under this namespace's name.
    sources.dynamicallyRegisterEventSource(
        new NamespacePodsEventSource(
            InformerEventSourceConfiguration.from(Pod.class, ModelDeployment.class)
                .withName(PodCache.SOURCE_PREFIX + NS)
                .withNamespaces(Set.of("elsewhere"))
                .withFollowControllerNamespacesChanges(false)
                .withSecondaryToPrimaryMapper(pod -> Set.of())
                .build(),
            sources.eventSourceContextForDynamicRegistration()));
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    OnePolicyCache policies = new OnePolicyCache(ServeRole.policy());

    assertThatThrownBy(() -> pods.use(NS, sources, policies).close())
        .isInstanceOf(PodCache.StartFailed.class)
        .hasMessageContaining("registered already");
    assertThat(pods.namespaces()).as("namespaces cached").isEmpty();

    pods.use(NS, sources, policies).close();
    assertThat(pods.list(NS).map(pod -> pod.getMetadata().getName()))
        .as("the namespace's pods, cached by the next pass")
        .containsExactly("engine-0");
  }
}

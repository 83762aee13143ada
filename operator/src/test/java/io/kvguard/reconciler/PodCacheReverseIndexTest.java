package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Starting a namespace's pod cache costs no policy lookup per pod, and neither does a write of the
 * operator's own (issue 28 §5). The policies' mapper ({@code policiesConcerning}) is what turns a
 * pod event into passes; JOSDK 5.2.3 also feeds it every pod to keep a reverse index for {@code
 * Context.getSecondaryResources} unless the informer has a primary-to-secondary mapper
 * (operator-framework/java-operator-sdk v5.2.3, {@code InformerEventSource}: {@code start} runs
 * {@code manager().list().forEach(primaryToSecondaryIndex::onAddOrUpdate)}, as do {@code onAdd},
 * {@code onUpdate} and {@code handleRecentCreateOrUpdate}). kvguard never asks JOSDK for a policy's
 * pods, so that index was N lookups before the first pass could read the namespace, N more as the
 * LIST's add events were handed out, and one per accepted write.
 *
 * <p>Driven through a real JOSDK controller's {@link EventSourceManager} (the {@code
 * EventSourceRetriever} a pass hands {@link PodCache#use}) against the embedded API server.
 */
class PodCacheReverseIndexTest {
  private static final String NS = OperatorHarness.NAMESPACE;
  private static final int PODS = 40;

  @RegisterExtension
  final UnstartedControllerExtension cluster = new UnstartedControllerExtension();

  private NamespacedKubernetesClient client;
  private EventSourceManager<ModelDeployment> sources;

  /** Every pod the policies' mapper was asked about, and on which thread. */
  private final List<String> asked = new CopyOnWriteArrayList<>();

  private final List<Thread> askedOn = new CopyOnWriteArrayList<>();

  private final SecondaryToPrimaryMapper<Pod> counting =
      pod -> {
        asked.add(pod.getMetadata().getName());
        askedOn.add(Thread.currentThread());
        return Set.of();
      };

  @BeforeEach
  void start() {
    client = cluster.client();
    sources = cluster.sources();
    for (int i = 0; i < PODS; i++) {
      createPod("engine-" + i);
    }
  }

  private Pod createPod(String name) {
    return client.pods().inNamespace(NS).resource(ServeRole.pod(name)).create();
  }

  private long askedOnThisThread() {
    return askedOn.stream().filter(t -> t == Thread.currentThread()).count();
  }

  @Test
  void startingANamespacesPodCacheAsksThePoliciesMapperAboutNoPodOfItsFirstList() {
    PodCache pods = new PodCache(counting, 1);

    try (PodCache.InUse held = pods.use(NS, sources, new OnePolicyCache(ServeRole.policy()))) {
      assertThat(askedOnThisThread())
          .as("lookups made before the pass could read the namespace")
          .isZero();
      assertThat(pods.list(NS)).hasSize(PODS);

      // A pod added after the LIST is an event for the policies: the mapper is asked about it once.
      // Its event comes after every add event of the LIST on the informer's one handler thread, so
      // once it is seen, every event of the LIST has been handled too.
      createPod("engine-late");
      await().atMost(Duration.ofSeconds(10)).until(() -> asked.contains("engine-late"));
      assertThat(asked)
          .as("the only pod the policies' mapper was asked about, from the start on")
          .containsExactly("engine-late");
    }
  }

  @Test
  void anOwnWriteAsksThePoliciesMapperNothing() {
    PodCache pods = new PodCache(counting, 1);
    try (PodCache.InUse held = pods.use(NS, sources, new OnePolicyCache(ServeRole.policy()))) {
      Pod base = client.pods().inNamespace(NS).withName("engine-0").get();
      Pod written =
          client
              .pods()
              .inNamespace(NS)
              .withName("engine-0")
              .edit(
                  p ->
                      new PodBuilder(p)
                          .editMetadata()
                          .addToLabels("kvguard.io/verified", "true")
                          .endMetadata()
                          .build());
      long before = askedOnThisThread();

      // What GateWriter's accepted write comes to (PodGate, ModelDeploymentReconciler): JOSDK's
      // temporary cache is told of it, on the pass's thread.
      pods.written(written, base);

      assertThat(askedOnThisThread()).as("lookups the own write made").isEqualTo(before);
      assertThat(pods.get(ResourceID.fromResource(written)))
          .hasValueSatisfying(
              p -> assertThat(p.getMetadata().getLabels()).containsKey("kvguard.io/verified"));
    }
  }
}

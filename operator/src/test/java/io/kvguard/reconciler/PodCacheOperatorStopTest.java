package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A pod informer that a pass starts while the operator stops is not left running after it.
 *
 * <p>JOSDK v5.2.3 stops, when the operator stops, the event sources registered by then ({@code
 * EventSourceManager.stop}, under the manager's lock), and then interrupts the passes still running
 * ({@code Operator.stop}: {@code ExecutorServiceManager.stop} with kvguard's {@code
 * reconciliationTerminationTimeout} of zero, so at once {@code shutdownNow}). A pass starting its
 * namespace's informer at that moment met the stop in one of three ways:
 *
 * <ul>
 *   <li>its source registered, the operator's stop reaching it before its start ({@code
 *       dynamicallyRegisterEventSource} starts a source after releasing the manager's lock): the
 *       stop found it not running and did nothing, and its start then ran an informer nobody
 *       stopped. Now a stopped source refuses to start ({@link NamespacePodsEventSource}).
 *   <li>its thread interrupted while it waited for the informer's start: JOSDK swallows the
 *       interrupt and marks the source running ({@code ExecutorServiceManager
 *       .executeAndWaitForAllToComplete}, {@code ManagedInformerEventSource.start}), and the pass
 *       kept a cache that may never have listed, with an informer registered after the stop. Now
 *       the start fails and its informer is stopped ({@link PodCache}).
 *   <li>registered after the stop, and started before the interrupt: still left running (JOSDK has
 *       no stopped state for a registration to see; docs/reliability.md).
 * </ul>
 *
 * <p>Driven through a real JOSDK controller's {@link EventSourceManager} against the embedded API
 * server, as {@code PodCacheReverseIndexTest} is.
 */
class PodCacheOperatorStopTest {
  private static final String NS = OperatorHarness.NAMESPACE;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private EmbeddedApiServer api;
  private NamespacedKubernetesClient client;
  private EventSourceManager<ModelDeployment> sources;
  private final CountDownLatch answerList = new CountDownLatch(1);

  /** A controller that is registered, not started: its event source manager is all that is used. */
  private static final class NoPasses implements Reconciler<ModelDeployment> {
    @Override
    public UpdateControl<ModelDeployment> reconcile(
        ModelDeployment resource, Context<ModelDeployment> context) {
      return UpdateControl.noUpdate();
    }
  }

  @BeforeEach
  @SuppressWarnings("unchecked")
  void start() {
    api = new EmbeddedApiServer();
    client = api.client();
    client
        .pods()
        .inNamespace(NS)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("engine-0")
                .withNamespace(NS)
                .withLabels(SERVE)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("engine")
                .withImage("lmsysorg/sglang")
                .endContainer()
                .endSpec()
                .build())
        .create();
    Operator operator =
        new Operator(
            o ->
                o.withKubernetesClient(client)
                    .withCloseClientOnStop(false)
                    .withUseSSAToPatchPrimaryResource(false));
    sources =
        ((Controller<ModelDeployment>) operator.register(new NoPasses())).getEventSourceManager();
    api.clearRequests();
  }

  @AfterEach
  void stop() {
    answerList.countDown();
    sources.dynamicallyDeRegisterEventSource(PodCache.SOURCE_PREFIX + NS);
    client.close();
    api.close();
  }

  private List<EmbeddedApiServer.Request> podRequests() {
    return api.requests().stream()
        .filter(r -> r.path().startsWith("/api/v1/namespaces/" + NS + "/pods"))
        .toList();
  }

  private static boolean podList(RecordedRequest r) {
    return r.getMethod().equals("GET")
        && r.getPath().startsWith("/api/v1/namespaces/" + NS + "/pods")
        && !r.getPath().contains("watch=true");
  }

  @Test
  void aPodInformerTheOperatorStoppedBeforeItsStartNeverStarts() {
    NamespacePodsEventSource source =
        new NamespacePodsEventSource(
            InformerEventSourceConfiguration.from(Pod.class, ModelDeployment.class)
                .withName(PodCache.SOURCE_PREFIX + NS)
                .withNamespaces(Set.of(NS))
                .withFollowControllerNamespacesChanges(false)
                .withSecondaryToPrimaryMapper(pod -> Set.of())
                .build(),
            sources.eventSourceContextForDynamicRegistration());
    // What the operator's stop (EventSourceManager.stop) does to a source a pass has registered and
    // not yet started.
    source.stop();

    assertThatThrownBy(() -> sources.dynamicallyRegisterEventSource(source))
        .isInstanceOf(OperatorException.class);
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(2))
        .untilAsserted(
            () ->
                assertThat(podRequests())
                    .as("pod requests of an informer the operator had stopped")
                    .isEmpty());
  }

  @Test
  void aPassInterruptedWhileItsNamespacesInformerStartsKeepsNoInformer() throws Exception {
    // The namespace's LIST is held until the pass has been interrupted.
    CountDownLatch listAsked = new CountDownLatch(1);
    api.faults(
        r -> {
          if (podList(r)) {
            listAsked.countDown();
            try {
              answerList.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return null;
        });
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread pass =
        new Thread(
            () -> {
              try (PodCache.InUse held = pods.use(NS, sources, new OnePolicy(policy()))) {
                outcome.set("cached");
              } catch (RuntimeException e) {
                outcome.set(e);
              }
            },
            "pass");
    pass.start();
    assertThat(listAsked.await(10, TimeUnit.SECONDS)).isTrue();

    // What the operator's stop does to a pass still running (ExecutorServiceManager.shutdownNow).
    pass.interrupt();
    pass.join(TimeUnit.SECONDS.toMillis(10));
    answerList.countDown();

    assertThat(outcome.get())
        .as("the pass whose informer start was interrupted")
        .isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.namespaces()).as("namespaces cached").isEmpty();
    assertThat(sources.getRegisteredEventSources())
        .as("pod informers left registered")
        .noneMatch(source -> source.name().startsWith(PodCache.SOURCE_PREFIX));
    // The LIST answered after the stop opens no WATCH: its informer was stopped.
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(3))
        .untilAsserted(
            () ->
                assertThat(podRequests())
                    .as("pod requests after the interrupted start's LIST")
                    .noneMatch(r -> r.path().contains("watch=true")));
  }

  @Test
  void anInformerStillRunningWhenKvguardStopsIsStoppedByItsStop() {
    // A pass that registered its namespace's informer after JOSDK stopped its event sources, and
    // whose start ended before the interrupt reached it: the informer runs, and JOSDK will not
    // stop it. kvguard's own stop (ModelDeploymentReconciler.shutdown, after the operator's) does.
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    OnePolicy policies = new OnePolicy(policy());
    pods.use(NS, sources, policies).close();
    createPod("engine-1");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(cachedNames(pods)).contains("engine-1"));

    pods.close();
    createPod("engine-2");

    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(3))
        .untilAsserted(
            () ->
                assertThat(cachedNames(pods))
                    .as("pods the stopped informer still brings")
                    .doesNotContain("engine-2"));
  }

  @Test
  void aStartThatEndsAfterKvguardStoppedKeepsNoInformer() throws Exception {
    CountDownLatch listAsked = new CountDownLatch(1);
    api.faults(
        r -> {
          if (podList(r)) {
            listAsked.countDown();
            try {
              answerList.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return null;
        });
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread pass =
        new Thread(
            () -> {
              try (PodCache.InUse held = pods.use(NS, sources, new OnePolicy(policy()))) {
                outcome.set("cached");
              } catch (RuntimeException e) {
                outcome.set(e);
              }
            },
            "pass");
    pass.start();
    assertThat(listAsked.await(10, TimeUnit.SECONDS)).isTrue();

    pods.close();
    answerList.countDown();
    pass.join(TimeUnit.SECONDS.toMillis(10));

    assertThat(outcome.get())
        .as("the pass whose informer started as kvguard stopped")
        .isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.namespaces()).as("namespaces cached").isEmpty();
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(3))
        .untilAsserted(
            () ->
                assertThat(podRequests())
                    .as("pod requests after the LIST answered past kvguard's stop")
                    .noneMatch(r -> r.path().contains("watch=true")));
  }

  private void createPod(String name) {
    client
        .pods()
        .inNamespace(NS)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(NS)
                .withLabels(SERVE)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("engine")
                .withImage("lmsysorg/sglang")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  private static List<String> cachedNames(PodCache pods) {
    return pods.list(NS).map(pod -> pod.getMetadata().getName()).toList();
  }

  private static ModelDeployment policy() {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName("glm");
    md.getMetadata().setNamespace(NS);
    md.getMetadata().setUid("uid-glm");
    md.getMetadata().setGeneration(1L);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(OperatorHarness.role("serve", Engine.SGLANG, SERVE)));
    md.setSpec(spec);
    return md;
  }

  /** The policies' cache holding one policy (the informer's, as a pass reads it). */
  private static final class OnePolicy implements IndexerResourceCache<ModelDeployment> {
    private final ModelDeployment md;

    OnePolicy(ModelDeployment md) {
      this.md = md;
    }

    @Override
    public void addIndexers(Map<String, Function<ModelDeployment, List<String>>> indexers) {}

    @Override
    public List<ModelDeployment> byIndex(String index, String key) {
      return List.of();
    }

    @Override
    public Optional<ModelDeployment> get(ResourceID id) {
      return id.equals(ResourceID.fromResource(md)) ? Optional.of(md) : Optional.empty();
    }

    @Override
    public Stream<ResourceID> keys() {
      return Stream.of(ResourceID.fromResource(md));
    }

    @Override
    public Stream<ModelDeployment> list(Predicate<ModelDeployment> predicate) {
      return Stream.of(md).filter(predicate);
    }

    @Override
    public Stream<ModelDeployment> list(String namespace, Predicate<ModelDeployment> predicate) {
      return list(m -> namespace.equals(m.getMetadata().getNamespace()) && predicate.test(m));
    }
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.processing.event.EventSourceManager;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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

  private EmbeddedApiServer api;
  private NamespacedKubernetesClient client;
  private EventSourceManager<ModelDeployment> sources;
  private final CountDownLatch answerList = new CountDownLatch(1);

  @BeforeEach
  void start() {
    api = new EmbeddedApiServer();
    client = api.client();
    createPod("engine-0");
    sources = UnstartedController.eventSources(client);
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

  /** A pass caching the namespace, its LIST held until {@code answerList}. */
  private record HeldPass(Thread pass, AtomicReference<Object> outcome) {}

  private HeldPass passHeldAtItsList(PodCache pods) throws InterruptedException {
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
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread pass =
        new Thread(
            () -> {
              try (PodCache.InUse held =
                  pods.use(NS, sources, new OnePolicyCache(ServeRole.policy()))) {
                outcome.set("cached");
              } catch (RuntimeException e) {
                outcome.set(e);
              }
            },
            "pass");
    pass.start();
    assertThat(listAsked.await(10, TimeUnit.SECONDS)).isTrue();
    return new HeldPass(pass, outcome);
  }

  @Test
  void aPassInterruptedWhileItsNamespacesInformerStartsKeepsNoInformer() throws Exception {
    // The namespace's LIST is held until the pass has been interrupted.
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    HeldPass held = passHeldAtItsList(pods);

    // What the operator's stop does to a pass still running (ExecutorServiceManager.shutdownNow).
    held.pass().interrupt();
    held.pass().join(TimeUnit.SECONDS.toMillis(10));
    answerList.countDown();

    assertThat(held.outcome().get())
        .as("the pass whose informer start was interrupted")
        .isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.namespaces()).as("namespaces cached").isEmpty();
    assertThat(sources.getRegisteredEventSources())
        .as("pod informers left registered")
        .noneMatch(source -> source.name().startsWith(PodCache.SOURCE_PREFIX));
    // The LIST answered after the stop opens no WATCH: its informer was stopped.
    awaitNoPodWatchOpened("pod requests after the interrupted start's LIST");
  }

  @Test
  void anInformerStillRunningWhenKvguardStopsIsStoppedByItsStop() {
    // A pass that registered its namespace's informer after JOSDK stopped its event sources, and
    // whose start ended before the interrupt reached it: the informer runs, and JOSDK will not
    // stop it. kvguard's own stop (ModelDeploymentReconciler.shutdown, after the operator's) does.
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    OnePolicyCache policies = new OnePolicyCache(ServeRole.policy());
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
    PodCache pods = new PodCache(pod -> Set.of(), 1);
    HeldPass held = passHeldAtItsList(pods);

    pods.close();
    answerList.countDown();
    held.pass().join(TimeUnit.SECONDS.toMillis(10));

    assertThat(held.outcome().get())
        .as("the pass whose informer started as kvguard stopped")
        .isInstanceOf(PodCache.StartFailed.class);
    assertThat(pods.namespaces()).as("namespaces cached").isEmpty();
    awaitNoPodWatchOpened("pod requests after the LIST answered past kvguard's stop");
  }

  private void createPod(String name) {
    client.pods().inNamespace(NS).resource(ServeRole.pod(name)).create();
  }

  /** No pod WATCH is opened in the next 2 s. */
  private void awaitNoPodWatchOpened(String what) {
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(3))
        .untilAsserted(
            () ->
                assertThat(podRequests()).as(what).noneMatch(r -> r.path().contains("watch=true")));
  }

  private static List<String> cachedNames(PodCache pods) {
    return pods.list(NS).map(pod -> pod.getMetadata().getName()).toList();
  }
}

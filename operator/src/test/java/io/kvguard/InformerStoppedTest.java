package io.kvguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.kvguard.testkit.EmbeddedApiServer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** When a stopped informer makes the replica step down, and when it does not. */
class InformerStoppedTest {
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final AtomicInteger steppedDown = new AtomicInteger();
  private final InformerStopped handler =
      new InformerStopped(stopping::get, steppedDown::incrementAndGet);

  private static SharedIndexInformer<?> informer(boolean synced) {
    return io.kvguard.testing.FakeInformer.of("pods-inference", synced);
  }

  @Test
  void anInformerThatStopsForGoodAfterSyncingStepsTheReplicaDown() {
    handler.onStop(informer(true), new IllegalStateException("watch refused: 403"));
    assertThat(steppedDown).hasValue(1);
  }

  @Test
  void anInformerStoppingWhileTheReplicaStopsIsExpected() {
    stopping.set(true);
    handler.onStop(informer(true), new IllegalStateException("Client is closed"));
    assertThat(steppedDown).hasValue(0);
  }

  @Test
  void anInformerStoppedWithoutErrorOrBeforeItSyncedDoesNotStepDown() {
    handler.onStop(informer(true), null);
    // Before its sync a failure is the start's, which Operator.start reports.
    handler.onStop(informer(false), new IllegalStateException("list refused"));
    assertThat(steppedDown).hasValue(0);
  }

  // With a real fabric8 informer (v7.5.2, the operator's), told of its stop as JOSDK tells the
  // handler (java-operator-sdk v5.2.3, InformerWrapper.start: informer.stopped().handle(...)).

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();

  @AfterEach
  void closeServer() {
    client.close();
    api.close();
  }

  /** A namespace with one pod, so its LIST has something to list. */
  private void onePod() {
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName("inference").endMetadata().build())
        .create();
    client
        .pods()
        .inNamespace("inference")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("serve-0")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("engine")
                .withImage("engine")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  private static boolean podWatch(io.fabric8.mockwebserver.http.RecordedRequest request) {
    return request.getPath().contains("/pods") && request.getPath().contains("watch=true");
  }

  /** The informer, its handler registered as JOSDK does; the future ends once it has run. */
  private CompletableFuture<Void> handled(SharedIndexInformer<Pod> informer) {
    return informer
        .stopped()
        .toCompletableFuture()
        .handle(
            (ignored, error) -> {
              handler.onStop(informer, error);
              return null;
            });
  }

  /**
   * A namespace's first LIST answered, its first WATCH refused: fabric8 stops the informer with the
   * refusal, after hasSynced() turned true (v7.5.2, Reflector.listSyncAndWatch sets the last
   * resourceVersion once the LIST is stored, before the watch; onException stops an informer whose
   * start has not completed). That is a failed start, and its starter hears of it: JOSDK's
   * InformerWrapper.start throws, so PodCache's pass fails and is retried (or Operator.start fails
   * and OperatorMain exits). It is no reason for a running replica to step down: before, it did,
   * and a leader whose pass opened a namespace (or relisted it after a selector change) at a moment
   * its watch was refused exited.
   */
  @Test
  void anInformerWhoseFirstWatchIsRefusedAfterItsListFailsItsStartWithoutSteppingDown()
      throws Exception {
    onePod();
    AtomicBoolean refused = new AtomicBoolean();
    api.faults(
        r ->
            podWatch(r) && refused.compareAndSet(false, true)
                ? new MockResponse()
                    .setResponseCode(403)
                    .setBody(EmbeddedApiServer.status(403, "Forbidden", "watch refused"))
                : null);
    SharedIndexInformer<Pod> informer = client.pods().inNamespace("inference").runnableInformer(0);
    CompletableFuture<Void> handled = handled(informer);

    assertThatThrownBy(() -> informer.start().toCompletableFuture().get(20, TimeUnit.SECONDS))
        .as("the start fails, and says so to whoever started it")
        .isInstanceOf(ExecutionException.class);
    handled.get(20, TimeUnit.SECONDS);
    assertThat(refused).isTrue();
    assertThat(informer.hasSynced()).as("its LIST was answered").isTrue();
    assertThat(steppedDown).hasValue(0);
  }

  /**
   * A started informer whose watch brings something it cannot read stops for good (fabric8 v7.5.2:
   * AbstractWatchManager.onMessage closes the watch with a WatcherException, which Reflector's
   * default ExceptionHandler does not retry): the replica steps down.
   */
  @Test
  void aStartedInformerWhoseWatchBreaksForGoodStepsTheReplicaDown() throws Exception {
    onePod();
    AtomicInteger watches = new AtomicInteger();
    CompletableFuture<WebSocket> firstWatch = new CompletableFuture<>();
    api.faults(
        r ->
            podWatch(r) && watches.incrementAndGet() == 1
                ? new MockResponse()
                    .withWebSocketUpgrade(
                        new WebSocketListener() {
                          @Override
                          public void onOpen(
                              WebSocket webSocket,
                              io.fabric8.mockwebserver.http.Response response) {
                            firstWatch.complete(webSocket);
                          }
                        })
                : null);
    SharedIndexInformer<Pod> informer = client.pods().inNamespace("inference").runnableInformer(0);
    CompletableFuture<Void> handled = handled(informer);
    informer.start().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertThat(steppedDown).hasValue(0);

    firstWatch.get(20, TimeUnit.SECONDS).send("{\"type\":\"MODIFIED\",\"object\":");
    handled.get(20, TimeUnit.SECONDS);
    assertThat(steppedDown).hasValue(1);
  }

  /**
   * An informer stopped without an error was stopped on purpose: fabric8 completes stopped()
   * normally only from stop() (v7.5.2, SharedIndexInformer.stopped, Reflector.stop), which JOSDK
   * calls when an event source is stopped or deregistered (v5.2.3, EventSourceManager
   * .dynamicallyDeRegisterEventSource, InformerManager.stop). PodCache does that each time a
   * namespace loses its last ModelDeployment or is listed again after a selector change: no step
   * down, and no warning in the operator's log each time a policy is created, edited or deleted.
   */
  @Test
  void anInformerStoppedOnPurposeIsNeitherAStepDownNorAWarning() throws Exception {
    onePod();
    Logger logger = (Logger) LoggerFactory.getLogger(InformerStopped.class);
    ListAppender<ILoggingEvent> logs = new ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      SharedIndexInformer<Pod> informer =
          client.pods().inNamespace("inference").runnableInformer(0);
      CompletableFuture<Void> handled = handled(informer);
      informer.start().toCompletableFuture().get(20, TimeUnit.SECONDS);
      informer.stop();
      handled.get(20, TimeUnit.SECONDS);
    } finally {
      logger.detachAppender(logs);
    }
    assertThat(steppedDown).hasValue(0);
    assertThat(logs.list).isNotEmpty().noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.observe.EventRecorder;
import io.kvguard.observe.EventRecorderSettings;
import io.kvguard.observe.KvguardMetrics;
import io.kvguard.observe.Observer;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineResponse;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Probe bookkeeping without an API server: an engine answering from memory, the book between two
 * passes. What an assessment wants is sent, its answer is what the next pass knows, and keys no
 * pass uses any more are let go.
 */
class ProbeBookTest {
  private static final long WINDOW = 1_048_576;
  private final Clock clock = Clock.systemUTC();
  private final Map<String, Answer> answers =
      EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000);
  private final AtomicInteger asked = new AtomicInteger();
  private final EngineHttp http =
      EngineHttp.inMemory(
          (endpoint, path) -> {
            if (path.equals("/server_info")) {
              asked.incrementAndGet();
            }
            Answer answer = answers.get(path);
            return answer == null
                ? new EngineResponse(path, 404, "application/json", "{}".getBytes())
                : new EngineResponse(path, answer.status(), answer.contentType(), answer.body());
          });
  private final List<ResourceID> told = new CopyOnWriteArrayList<>();
  private final ProbeBook book =
      new ProbeBook(
          new ProbeLimits(2, 2, 1),
          clock,
          EngineProbes.standard(http),
          new RejectionProbe(http),
          new io.kvguard.probe.PdRouterProbe(http, new RejectionProbe(http)),
          io.kvguard.probe.RouterAddress.CLUSTER_IP,
          (namespace, service, port) -> new RouterServices.Check.Usable("10.96.0.10"),
          new ProbeCredentials(null, clock),
          new ProbeTrust(null, clock),
          new Observer(
              new EventRecorder(
                  null,
                  new KvguardMetrics(new SimpleMeterRegistry()),
                  clock,
                  "test",
                  EventRecorderSettings.standard()),
              new KvguardMetrics(new SimpleMeterRegistry())),
          (namespace, name, uid, podIP) -> Optional.empty(),
          told::add);
  private final RoleSpec serve = role("serve", Engine.SGLANG, Map.of("app", "glm"));
  private final ModelDeployment md = AssessmentTest.modelDeployment(serve);
  private final Pod pod = AssessmentTest.pod(0, null);

  @AfterEach
  void close() {
    book.close();
  }

  private Assessment.Assessed pass() {
    Assessment.Assessed assessed =
        Assessment.of(
            new Assessment.Input(md, serve, pod, null, false, clock.instant()), book.known(md));
    book.settle(md, List.of(assessed), RouterProofs.Outcome.none(List.of(assessed)));
    return assessed;
  }

  @Test
  void aWantedProbeIsSentAndItsAnswerIsWhatTheNextPassKnows() {
    Assessment.Assessed first = pass();
    assertThat(first.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
    await().atMost(Duration.ofSeconds(10)).until(() -> told.contains(ResourceID.fromResource(md)));

    Assessment.Assessed second = pass();
    assertThat(second.assessment().verdict().reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(second.probe()).as("a fresh answer wants no probe").isEmpty();
    assertThat(asked).hasValue(1);
  }

  @Test
  void aKeyThePolicyNoLongerAsksWithIsLetGoAndAPolicyThatGoesTakesItsResultsAlong() {
    ProbeScheduler.Key before = pass().probeKey();
    await().atMost(Duration.ofSeconds(10)).until(() -> book.known(md).probe(before).isPresent());

    // A spec edit changes how the pod is asked (the probe timeout is part of the key).
    md.getSpec().getProbe().setTimeoutSeconds(7);
    ProbeScheduler.Key after = pass().probeKey();
    assertThat(after).isNotEqualTo(before);
    assertThat(book.known(md).probe(before)).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> book.known(md).probe(after).isPresent());

    book.forgetAll(ResourceID.fromResource(md));
    assertThat(book.known(md).probe(after)).isEmpty();
  }
}

package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.demo.EmbeddedApiServer;
import io.kvguard.demo.SimulatedPods;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PodGate against the API server, on the pod as it changes under a pass: a decision to open is written only
 * onto the containers it was made for.
 */
class PodGateIT {
  private static final String NS = "inference";
  private static final GateDecision OPEN = new GateDecision(true, GateReason.PoolSufficient, "pool 2040000 tokens");

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final KubernetesClient client = api.client();
  private final SimulatedPods pods = new SimulatedPods(client);
  private final PodGate gate = new PodGate(client, Clock.systemUTC());

  @AfterEach
  void close() {
    api.close();
  }

  @Test
  void anOpeningDecisionForAContainerThatRestartedSinceIsNotWritten() {
    Pod judged = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome = gate.apply(judged, OPEN, () -> { }, (written, previous) -> { });

    assertThat(outcome.conditionWritten()).isFalse();
    assertThat(outcome.labelWritten()).isFalse();
    assertThat(gateCondition()).isNull();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
  }

  @Test
  void theLabelDoesNotFollowAnOpenConditionOntoAContainerThatRestartedBetweenTheWrites() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    // The condition is already open for this container; only the label is missing when the pass reads the pod.
    PodGate.Outcome first = gate.apply(created, OPEN, () -> { }, (written, previous) -> { });
    assertThat(first.labelWritten()).isTrue();
    client.pods().inNamespace(NS).withName("serve-0").edit(p -> {
      p.getMetadata().getLabels().remove(GateNames.VERIFIED_LABEL);
      return p;
    });
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome = gate.apply(judged, OPEN, () -> { }, (written, previous) -> { });

    assertThat(outcome.labelWritten()).isFalse();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
  }

  @Test
  void aClosingDecisionIsWrittenWhateverTheContainersDid() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    Pod open = client.pods().inNamespace(NS).withName("serve-0").get();
    gate.apply(open, OPEN, () -> { }, (written, previous) -> { });
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome = gate.apply(judged, new GateDecision(false, GateReason.PoolTooSmall, "pool 600000 tokens"),
        () -> { }, (written, previous) -> { });

    assertThat(outcome.conditionWritten()).isTrue();
    assertThat(gateCondition().getStatus()).isEqualTo("False");
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
    assertThat(created.getMetadata().getUid()).isEqualTo(judged.getMetadata().getUid());
  }

  @Test
  void handingAPodBackTakesItsLabelWhateverItsContainersDidSince() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    gate.apply(created, OPEN, () -> { }, (written, previous) -> { });
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    assertThat(labels()).containsKey(GateNames.VERIFIED_LABEL);
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome = gate.apply(judged, GateDecision.released("no longer selected by ModelDeployment glm"),
        () -> { }, (written, previous) -> { });

    assertThat(outcome.labelWritten()).isTrue();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
    assertThat(gateCondition().getReason()).isEqualTo("PolicyRemoved");
  }

  private io.fabric8.kubernetes.api.model.PodCondition gateCondition() {
    return client.pods().inNamespace(NS).withName("serve-0").get().getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType())).findFirst().orElse(null);
  }

  private Map<String, String> labels() {
    Map<String, String> labels = client.pods().inNamespace(NS).withName("serve-0").get().getMetadata().getLabels();
    return labels == null ? Map.of() : labels;
  }
}

package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.SimulatedPods;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * PodGate against the API server, on the pod as it changes under a pass: a decision to open is
 * written only onto the containers it was made for.
 */
class PodGateIT {
  private static final String NS = "inference";
  private static final GateDecision OPEN =
      new GateDecision(true, GateReason.PoolSufficient, "pool 2040000 tokens");

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

    PodGate.Outcome outcome = gate.apply(judged, OPEN, () -> {}, (written, previous) -> {});

    assertThat(outcome.conditionWritten()).isFalse();
    assertThat(outcome.labelWritten()).isFalse();
    assertThat(gateCondition()).isNull();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
  }

  /**
   * A write refused because the pod changed after the caller's read (someone else's field) is
   * planned again on a fresh read; its hearer learns both versions: the caller's cache may still
   * show the one it read, which the write replaced as surely as the fresh one (OwnWrites).
   */
  @Test
  void aWritePlannedAgainAfterAConflictTellsTheVersionTheCallerRead() {
    Pod read = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    editLabels(labels -> labels.put("team", "search"));
    java.util.List<String> heard = new java.util.ArrayList<>();

    PodGate.Outcome outcome =
        gate.apply(
            read,
            OPEN,
            null,
            () -> {},
            (written, base, caller) ->
                heard.add(
                    written.getMetadata().getResourceVersion()
                        + " on "
                        + base.getMetadata().getResourceVersion()
                        + " read "
                        + caller.getMetadata().getResourceVersion()));

    assertThat(outcome.conditionWritten()).isTrue();
    assertThat(heard).hasSize(2);
    String readVersion = read.getMetadata().getResourceVersion();
    assertThat(heard).allSatisfy(line -> assertThat(line).endsWith(" read " + readVersion));
    // The condition was planned again on the fresh pod, not on the read.
    assertThat(heard.get(0)).doesNotContain(" on " + readVersion + " ");
  }

  @Test
  void theLabelDoesNotFollowAnOpenConditionOntoAContainerThatRestartedBetweenTheWrites() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    // The condition is already open for this container; only the label is missing when the pass
    // reads the pod.
    PodGate.Outcome first = gate.apply(created, OPEN, () -> {}, (written, previous) -> {});
    assertThat(first.labelWritten()).isTrue();
    editLabels(labels -> labels.remove(GateNames.VERIFIED_LABEL));
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome = gate.apply(judged, OPEN, () -> {}, (written, previous) -> {});

    assertThat(outcome.labelWritten()).isFalse();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
  }

  @Test
  void aClosingDecisionIsWrittenWhateverTheContainersDid() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    Pod open = client.pods().inNamespace(NS).withName("serve-0").get();
    gate.apply(open, OPEN, () -> {}, (written, previous) -> {});
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome =
        gate.apply(
            judged,
            new GateDecision(false, GateReason.PoolTooSmall, "pool 600000 tokens"),
            () -> {},
            (written, previous) -> {});

    assertThat(outcome.conditionWritten()).isTrue();
    assertThat(gateCondition().getStatus()).isEqualTo("False");
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
    assertThat(created.getMetadata().getUid()).isEqualTo(judged.getMetadata().getUid());
  }

  @Test
  void handingAPodBackTakesItsLabelWhateverItsContainersDidSince() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    gate.apply(created, OPEN, () -> {}, (written, previous) -> {});
    Pod judged = client.pods().inNamespace(NS).withName("serve-0").get();
    assertThat(labels()).containsKey(GateNames.VERIFIED_LABEL);
    pods.restartEngine(NS, "serve-0");

    PodGate.Outcome outcome =
        gate.apply(
            judged,
            GateDecision.released("no longer selected by ModelDeployment glm"),
            () -> {},
            (written, previous) -> {});

    assertThat(outcome.labelWritten()).isTrue();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
    assertThat(gateCondition().getReason()).isEqualTo("PolicyRemoved");
  }

  @Test
  void aStaleWriterCannotPutTheLabelBackOnAPodANewerDecisionShut() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    gate.apply(created, OPEN, () -> {}, (written, previous) -> {});
    // A replica that still believes it leads read the pod between an earlier pass's condition and
    // label writes:
    // condition open, no label yet.
    editLabels(labels -> labels.remove(GateNames.VERIFIED_LABEL));
    Pod staleRead = client.pods().inNamespace(NS).withName("serve-0").get();
    // The new leader shuts the pod (its engine was re-probed and refused).
    Pod current = client.pods().inNamespace(NS).withName("serve-0").get();
    gate.apply(
        current,
        new GateDecision(false, GateReason.PoolTooSmall, "pool 600000 tokens"),
        () -> {},
        (written, previous) -> {});
    api.clearRequests();

    // The deposed leader writes the decision it made from its old read: the label it would add is
    // refused.
    PodGate.Outcome outcome = gate.apply(staleRead, OPEN, () -> {}, (written, previous) -> {});
    java.util.List<EmbeddedApiServer.Request> sent = api.requests();

    assertThat(outcome.labelWritten()).isFalse();
    assertThat(outcome.superseded()).isTrue();
    assertThat(labels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
    assertThat(gateCondition().getStatus()).isEqualTo("False");
    assertThat(gateCondition().getReason()).isEqualTo("PoolTooSmall");
    // One refused patch and the re-read that showed the newer decision; nothing written.
    assertThat(sent).extracting(EmbeddedApiServer.Request::method).containsExactly("PATCH", "GET");
    assertThat(sent.get(0).status()).isEqualTo(422);
  }

  @Test
  void aStaleWriterCannotOverwriteANewerConditionDecision() {
    Pod created = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    gate.apply(
        created,
        new GateDecision(false, GateReason.PoolTooSmall, "pool 600000 tokens"),
        () -> {},
        (written, previous) -> {});
    Pod staleRead = client.pods().inNamespace(NS).withName("serve-0").get();
    // A newer decision, made on a newer read: the pod was re-probed after an engine change and
    // passed.
    gate.apply(
        client.pods().inNamespace(NS).withName("serve-0").get(),
        OPEN,
        () -> {},
        (written, previous) -> {});

    // The stale writer's decision (shut, for another reason) was made without seeing it.
    PodGate.Outcome outcome =
        gate.apply(
            staleRead,
            new GateDecision(false, GateReason.ProbeFailed, "GET /server_info timed out"),
            () -> {},
            (written, previous) -> {});

    assertThat(outcome.conditionWritten()).isFalse();
    assertThat(outcome.superseded()).isTrue();
    assertThat(gateCondition().getStatus()).isEqualTo("True");
    assertThat(gateCondition().getReason()).isEqualTo("PoolSufficient");
    assertThat(labels()).containsEntry(GateNames.VERIFIED_LABEL, "true");
  }

  @Test
  void aWriteOnAPodThatChangedOnlyElsewhereIsPlannedAgainAndMade() {
    Pod judged = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    // The kubelet touches the pod after the read (another condition): not a decision about the
    // gate.
    client
        .pods()
        .inNamespace(NS)
        .withName("serve-0")
        .editStatus(
            p -> {
              p.getStatus().getConditions().get(0).setStatus("True");
              return p;
            });

    PodGate.Outcome outcome = gate.apply(judged, OPEN, () -> {}, (written, previous) -> {});

    assertThat(outcome.conditionWritten()).isTrue();
    assertThat(outcome.labelWritten()).isTrue();
    assertThat(gateCondition().getStatus()).isEqualTo("True");
    assertThat(
            client
                .pods()
                .inNamespace(NS)
                .withName("serve-0")
                .get()
                .getStatus()
                .getConditions()
                .get(0)
                .getStatus())
        .as("the kubelet's condition is kept")
        .isEqualTo("True");
  }

  @Test
  void aTerminatingPodIsNeverWritten() {
    pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    editMetadata(meta -> meta.setFinalizers(java.util.List.of("example.com/hold")));
    client.pods().inNamespace(NS).withName("serve-0").delete();
    Pod terminating = client.pods().inNamespace(NS).withName("serve-0").get();
    assertThat(terminating.getMetadata().getDeletionTimestamp()).isNotNull();
    api.clearRequests();

    PodGate.Outcome outcome =
        gate.apply(
            terminating,
            new GateDecision(false, GateReason.AwaitingProbe, "pod is terminating"),
            () -> {},
            (written, previous) -> {});

    assertThat(outcome.conditionWritten()).isFalse();
    assertThat(outcome.labelWritten()).isFalse();
    assertThat(api.requests()).isEmpty();
  }

  private io.fabric8.kubernetes.api.model.PodCondition gateCondition() {
    return client
        .pods()
        .inNamespace(NS)
        .withName("serve-0")
        .get()
        .getStatus()
        .getConditions()
        .stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private Map<String, String> labels() {
    Map<String, String> labels =
        client.pods().inNamespace(NS).withName("serve-0").get().getMetadata().getLabels();
    return labels == null ? Map.of() : labels;
  }

  /** Someone else (a tenant, the kubelet) edits serve-0's labels. */
  private void editLabels(java.util.function.Consumer<Map<String, String>> change) {
    editMetadata(meta -> change.accept(meta.getLabels()));
  }

  /** Someone else edits serve-0's metadata. */
  private void editMetadata(
      java.util.function.Consumer<io.fabric8.kubernetes.api.model.ObjectMeta> change) {
    client
        .pods()
        .inNamespace(NS)
        .withName("serve-0")
        .edit(
            p -> {
              change.accept(p.getMetadata());
              return p;
            });
  }
}

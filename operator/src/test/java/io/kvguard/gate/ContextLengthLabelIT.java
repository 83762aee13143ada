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
 * The context-length label through PodGate on the API server: on with verification, off with a
 * refusal.
 */
class ContextLengthLabelIT {
  private static final String NS = "inference";
  private static final String LABEL = "llm-d.ai/context-length-range";

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final KubernetesClient client = api.client();
  private final SimulatedPods pods = new SimulatedPods(client);
  private final PodGate gate = new PodGate(client, Clock.systemUTC());

  @AfterEach
  void close() {
    api.close();
  }

  @Test
  void aVerifiedPodCarriesItsMeasuredContextUntilItIsRefused() {
    Pod pod = pods.createRunning(NS, "serve-0", Map.of("app", "llm"), 30000, true);

    gate.apply(
        pod,
        new GateDecision(true, GateReason.PoolSufficient, "pool 262144 tokens"),
        new RecordUpdate("llm", record("Verified", 262144L), true),
        () -> {},
        (written, previous) -> {});
    assertThat(labels())
        .containsEntry(LABEL, "0-131072")
        .containsEntry(GateNames.VERIFIED_LABEL, "true");

    gate.apply(
        current(),
        new GateDecision(false, GateReason.PoolTooSmall, "pool 65536 tokens"),
        new RecordUpdate("llm", record("Refused", 65536L), true),
        () -> {},
        (written, previous) -> {});
    assertThat(labels())
        .doesNotContainKeys(LABEL, GateNames.VERIFIED_LABEL)
        .containsEntry("app", "llm");
  }

  @Test
  void aPublishingPolicyThatLetsGoWhileAnotherHoldsThePodTakesItsLabelAway() {
    Pod pod = pods.createRunning(NS, "serve-0", Map.of("app", "llm"), 30000, true);
    gate.apply(
        pod,
        new GateDecision(true, GateReason.PoolSufficient, "pool 262144 tokens"),
        new RecordUpdate("llm", record("Verified", 262144L), true),
        () -> {},
        (written, previous) -> {});
    gate.apply(
        current(),
        new GateDecision(true, GateReason.PoolSufficient, "pool 262144 tokens"),
        new RecordUpdate("other", record("Verified", 262144L), false),
        () -> {},
        (written, previous) -> {});
    assertThat(labels()).containsEntry(LABEL, "0-131072");

    // "llm" is deleted (or no longer selects the pod) while "other", which does not publish, still
    // gates it: the reconciler writes only the record (decision null). The label "llm" published
    // must not outlive it: nobody would ever correct it again, and a restarted engine with a
    // smaller pool would keep attracting long prompts.
    gate.apply(
        current(), null, RecordUpdate.remove("llm", true), () -> {}, (written, previous) -> {});

    assertThat(labels()).doesNotContainKey(LABEL).containsEntry(GateNames.VERIFIED_LABEL, "true");
    assertThat(VerdictRecords.of(current())).containsOnlyKeys("other");
  }

  private static VerdictRecord record(String verdict, long pool) {
    return new VerdictRecord(
        "serve",
        verdict,
        "Verified".equals(verdict) ? "PoolSufficient" : "PoolTooSmall",
        null,
        0,
        pool,
        null,
        131072L,
        "0.11.0",
        null,
        null,
        null,
        null,
        null,
        "2026-01-01T00:00:00Z");
  }

  private Pod current() {
    return client.pods().inNamespace(NS).withName("serve-0").get();
  }

  private Map<String, String> labels() {
    return current().getMetadata().getLabels();
  }
}

package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.SimulatedPods;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.time.Clock;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * GateWriter against the API server, in the order two policies' passes can reach a pod whose labels
 * moved it from an enforcing policy to an Audit one.
 */
class GateWriterIT {
  private static final String NS = "inference";
  private static final ResourceID GLM = new ResourceID("glm", NS);
  private static final ResourceID TRIAL = new ResourceID("trial", NS);
  private static final GateDecision REFUSED =
      new GateDecision(false, GateReason.PoolTooSmall, "pool 681280 tokens");
  private static final GateDecision AUDIT =
      new GateDecision(true, GateReason.Audit, "audit mode, gate not enforced");
  private static final GateWriter.Hooks NO_HOOKS =
      new GateWriter.Hooks() {
        @Override
        public void beforeWrite() {}

        @Override
        public void accepted(Pod written, Pod previous, Pod read) {}
      };

  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final KubernetesClient client = api.client();
  private final SimulatedPods pods = new SimulatedPods(client);
  private final GateWriter writer = new GateWriter(new PodGate(client, Clock.systemUTC()));

  @AfterEach
  void close() {
    api.close();
  }

  @Test
  void anAuditPassNamingTheEnforcingPolicyThatLetThePodGoLeavesItShutAsLetGo() {
    Pod pod = pods.createRunning(NS, "serve-0", Map.of("app", "glm"), 30000, true);
    writer.decide(pod, GLM, REFUSED, Set.of(), null, NO_HOOKS);
    // The pod's labels now select it under trial (Audit) only: glm lets it go shut and forgets it.
    writer.release(
        fresh(),
        GLM,
        GateDecision.noLongerSelected("glm"),
        Set.of(),
        RecordUpdate.remove("glm"),
        NO_HOOKS);
    writer.forget(pod.getMetadata().getUid(), GLM);

    // trial's pass still counts glm among the pod's policies (glm's status lists the pod until its
    // own status write lands): glm has no decision to arbitrate with.
    writer.decide(fresh(), TRIAL, AUDIT, Set.of(GLM), null, NO_HOOKS);
    assertThat(gate().getReason()).isEqualTo(GateReason.NoLongerSelected.name());

    // trial's next pass, glm no longer named: the gate an enforcing policy let go stays shut.
    writer.decide(fresh(), TRIAL, AUDIT, Set.of(), null, NO_HOOKS);
    assertThat(gate().getStatus()).isEqualTo("False");
    assertThat(gate().getReason()).isEqualTo(GateReason.NoLongerSelected.name());
    assertThat(fresh().getMetadata().getLabels()).doesNotContainKey(GateNames.VERIFIED_LABEL);
  }

  private Pod fresh() {
    return client.pods().inNamespace(NS).withName("serve-0").get();
  }

  private PodCondition gate() {
    return fresh().getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst()
        .orElseThrow();
  }
}

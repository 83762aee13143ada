package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GateArbiterTest {
  private static final ResourceID SERVE = new ResourceID("glm-serve", "inference");
  private static final ResourceID BATCH = new ResourceID("glm-batch", "inference");
  private static final GateDecision OPEN =
      new GateDecision(true, GateReason.PoolSufficient, "pool ok");
  private static final GateDecision SHUT =
      new GateDecision(false, GateReason.PoolTooSmall, "pool 600000");

  private final GateArbiter arbiter = new GateArbiter();

  @Test
  void theStrictestDecisionWinsAndAPolicyThatHasNotDecidedCountsAsShut() {
    assertThat(arbiter.arbitrate("uid-1", SERVE, OPEN, Set.of(BATCH)).decision().open()).isFalse();
    arbiter.arbitrate("uid-1", BATCH, SHUT, Set.of(SERVE));
    GateArbiter.Arbitration serve = arbiter.arbitrate("uid-1", SERVE, OPEN, Set.of(BATCH));
    assertThat(serve.decision().reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(serve.decision().message()).startsWith("ModelDeployment glm-batch: ");
  }

  @Test
  void aForgottenDecisionNoLongerCounts() {
    arbiter.arbitrate("uid-gone", BATCH, OPEN, Set.of());
    arbiter.arbitrate("uid-kept", BATCH, OPEN, Set.of());

    arbiter.forget("uid-gone", BATCH);

    assertThat(arbiter.arbitrate("uid-gone", SERVE, OPEN, Set.of(BATCH)).decision().reason())
        .isEqualTo(GateReason.AwaitingProbe);
    assertThat(arbiter.arbitrate("uid-kept", SERVE, OPEN, Set.of(BATCH)).decision().open())
        .isTrue();
  }

  @Test
  void aGateShutOnlyForAPolicyWithNoDecisionSaysSoAndOneAPolicyShutDoesNot() {
    GateArbiter.Arbitration standIn = arbiter.arbitrate("uid-1", SERVE, OPEN, Set.of(BATCH));
    assertThat(standIn.decision().reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(standIn.shutOnlyByStandIns()).isTrue();

    assertThat(arbiter.arbitrate("uid-2", SERVE, SHUT, Set.of(BATCH)).shutOnlyByStandIns())
        .isFalse();
    arbiter.arbitrate("uid-3", BATCH, OPEN, Set.of());
    assertThat(arbiter.arbitrate("uid-3", SERVE, OPEN, Set.of(BATCH)).shutOnlyByStandIns())
        .isFalse();
  }

  @Test
  void onePodAlwaysMapsToOneLock() {
    assertThat(arbiter.lockFor("uid-1")).isSameAs(arbiter.lockFor("uid-1"));
  }
}

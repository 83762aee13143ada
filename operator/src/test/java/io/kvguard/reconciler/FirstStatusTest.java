package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A new policy's first status says what its probes found, not that they were sent; it waits for
 * them at most {@link FirstStatus#WAIT}, and anything else worth saying is written at once.
 */
class FirstStatusTest {
  private static final Instant T0 = Instant.parse("2026-12-06T00:00:00Z");
  private final FirstStatus first = new FirstStatus();

  private static ModelDeployment policy() {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setNamespace("inference");
    md.getMetadata().setName("glm");
    md.getMetadata().setUid("uid-1");
    return md;
  }

  private static PodVerdictStatus pod(String name, String reason) {
    PodVerdictStatus entry = new PodVerdictStatus();
    entry.name = name;
    entry.reason = reason;
    return entry;
  }

  @Test
  void aNewPolicyWhosePodsAllAwaitTheirFirstProbeWaitsForThemAtMostTheWait() {
    ModelDeployment md = policy();
    List<PodVerdictStatus> awaiting =
        List.of(pod("serve-0", "AwaitingProbe"), pod("serve-1", "AwaitingProbe"));

    assertThat(first.holdFor(md, awaiting, true, T0)).hasValue(FirstStatus.WAIT);
    assertThat(first.holdFor(md, awaiting, true, T0.plusSeconds(2)))
        .hasValue(FirstStatus.WAIT.minusSeconds(2));
    // Past the wait, the status says what there is to say: the probes have not answered.
    assertThat(first.holdFor(md, awaiting, true, T0.plus(FirstStatus.WAIT))).isEmpty();
    assertThat(first.policies()).isEmpty();
  }

  @Test
  void aVerdictNoPodAnInvalidSpecOrAStatusWrittenBeforeIsWrittenAtOnce() {
    ModelDeployment md = policy();
    assertThat(
            first.holdFor(
                md,
                List.of(pod("serve-0", "AwaitingProbe"), pod("serve-1", "PoolTooSmall")),
                true,
                T0))
        .isEmpty();
    assertThat(first.holdFor(md, List.of(), true, T0)).as("no pod selected").isEmpty();
    assertThat(first.holdFor(md, List.of(pod("serve-0", "AwaitingProbe")), false, T0))
        .as("an invalid spec")
        .isEmpty();
    md.setStatus(new ModelDeploymentStatus());
    assertThat(first.holdFor(md, List.of(pod("serve-0", "AwaitingProbe")), true, T0))
        .as("a status written before (a restarted operator)")
        .isEmpty();
    assertThat(first.policies()).isEmpty();
  }

  @Test
  void theWaitIsForgottenWithThePolicy() {
    ModelDeployment md = policy();
    first.holdFor(md, List.of(pod("serve-0", "AwaitingProbe")), true, T0);
    assertThat(first.policies()).hasSize(1);
    first.forget(io.javaoperatorsdk.operator.processing.event.ResourceID.fromResource(md));
    assertThat(first.policies()).isEmpty();
    assertThat(first.holdFor(md, List.of(pod("serve-0", "AwaitingProbe")), true, T0.plusSeconds(9)))
        .as("a new wait")
        .hasValue(Duration.ofSeconds(5));
  }
}

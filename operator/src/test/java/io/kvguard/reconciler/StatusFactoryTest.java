package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Status is a pure function of the previous status, this pass, and the clock. */
class StatusFactoryTest {
  private static final Instant T0 = Instant.parse("2026-12-01T08:00:00Z");
  private static final Instant T1 = Instant.parse("2026-12-01T09:30:00Z");

  private static ModelDeployment md() {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName("glm");
    md.getMetadata().setNamespace("inference");
    md.getMetadata().setGeneration(3L);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("m");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(role("prefill", Engine.SGLANG, Map.of("r", "p")), role("decode", Engine.SGLANG, Map.of("r", "d"))));
    md.setSpec(spec);
    return md;
  }

  private static PodAssessment pod(String name, String role, Verdict verdict, GateReason reason, long pool) {
    return new PodAssessment(new PodBuilder().withNewMetadata().withName(name).withUid("uid-" + name).endMetadata().build(),
        role, false, "containerd://" + name, 0, new PoolVerdict(verdict, reason, "numbers for " + name),
        new PoolObservation(pool, OptionalLong.of(1_048_576), "0.5.22", role, List.of()), List.of(), null);
  }

  private static Condition condition(ModelDeploymentStatus status, String type) {
    return status.conditions.stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow();
  }

  @Test
  void readyNeedsEveryRolesMinimumAndCountsArePerRole() {
    ModelDeploymentStatus status = StatusFactory.build(md(), List.of(
        pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
        pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)), Map.of(), Optional.empty(), List.of(), T0);

    assertThat(status.verified).isEqualTo("1/2");
    assertThat(status.observedGeneration).isEqualTo(3L);
    assertThat(condition(status, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(status, "Ready").getMessage()).isEqualTo("role prefill: 0/1 verified, needs 1");
    assertThat(condition(status, "PoolsVerified").getReason()).isEqualTo("PodsNotVerified");
    assertThat(status.roles).extracting(r -> r.name + ":" + r.verified + "/" + r.selected + ":" + r.smallestPoolTokens)
        .containsExactly("prefill:0/1:681280", "decode:1/1:4000000");
    assertThat(status.pods).extracting(p -> p.name).containsExactly("d-0", "p-0");
  }

  @Test
  void timestampsMoveOnlyWhereSomethingFlipped() {
    ModelDeployment md = md();
    md.setStatus(StatusFactory.build(md, List.of(
        pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
        pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)), Map.of(), Optional.empty(), List.of(), T0));

    ModelDeploymentStatus same = StatusFactory.build(md, List.of(
        pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
        pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)), Map.of(), Optional.empty(), List.of(), T1);
    assertThat(StatusComparison.same(md.getStatus(), same)).isTrue();

    ModelDeploymentStatus fixed = StatusFactory.build(md, List.of(
        pod("p-0", "prefill", Verdict.Verified, GateReason.PoolSufficient, 2_040_000),
        pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)), Map.of(), Optional.empty(), List.of(), T1);
    assertThat(condition(fixed, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(fixed, "Ready").getLastTransitionTime()).isEqualTo("2026-12-01T09:30:00Z");
    assertThat(condition(fixed, "InvalidSpec").getLastTransitionTime()).isEqualTo("2026-12-01T08:00:00Z");
    assertThat(fixed.pods).filteredOn(p -> p.name.equals("p-0")).singleElement()
        .satisfies(p -> assertThat(p.lastTransitionTime).isEqualTo("2026-12-01T09:30:00Z"));
    assertThat(fixed.pods).filteredOn(p -> p.name.equals("d-0")).singleElement()
        .satisfies(p -> assertThat(p.lastTransitionTime).isEqualTo("2026-12-01T08:00:00Z"));
  }

  @Test
  void anInvalidSpecIsNeitherReadyNorVerified() {
    ModelDeploymentStatus status = StatusFactory.build(md(), List.of(), Map.of(), Optional.of("role prefill: bad"), List.of(), T0);
    assertThat(condition(status, "InvalidSpec").getStatus()).isEqualTo("True");
    assertThat(condition(status, "Ready").getReason()).isEqualTo("InvalidSpec");
    assertThat(condition(status, "PoolsVerified").getStatus()).isEqualTo("False");
  }
}

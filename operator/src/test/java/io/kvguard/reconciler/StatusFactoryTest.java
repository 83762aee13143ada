package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.gate.VerdictRecord;
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
    spec.setRoles(
        List.of(
            role("prefill", Engine.SGLANG, Map.of("r", "p")),
            role("decode", Engine.SGLANG, Map.of("r", "d"))));
    md.setSpec(spec);
    return md;
  }

  private static PodAssessment pod(
      String name, String role, Verdict verdict, GateReason reason, long pool) {
    return pod(name, role, verdict, reason, pool, false);
  }

  private static PodAssessment pod(
      String name, String role, Verdict verdict, GateReason reason, long pool, boolean labelOnly) {
    return new PodAssessment(
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withUid("uid-" + name)
            .endMetadata()
            .build(),
        role,
        labelOnly,
        "containerd://" + name,
        0,
        new PoolVerdict(verdict, reason, "numbers for " + name),
        new PoolObservation(pool, OptionalLong.of(1_048_576), "0.5.22", role, List.of()),
        List.of(),
        null);
  }

  /** {@code count} pods named {@code prefix-00}, {@code prefix-01}, ... of role prefill. */
  private static List<PodAssessment> pods(
      String prefix, int count, Verdict verdict, GateReason reason, long pool, boolean labelOnly) {
    List<PodAssessment> pods = new java.util.ArrayList<>();
    for (int i = 0; i < count; i++) {
      pods.add(
          pod(String.format("%s-%02d", prefix, i), "prefill", verdict, reason, pool, labelOnly));
    }
    return pods;
  }

  /**
   * A pass's status: this pass's assessments over what the previous status recorded (as the
   * reconciler does).
   */
  static ModelDeploymentStatus build(
      ModelDeployment md, List<PodAssessment> assessments, Instant now) {
    Map<String, VerdictRecord> before = new java.util.HashMap<>();
    if (md.getStatus() != null) {
      md.getStatus().pods.forEach(p -> before.put(p.name, PodRecords.of(p)));
    }
    return StatusFactory.build(
        md,
        StatusFactory.entries(assessments, before, now),
        Map.of(),
        Optional.empty(),
        List.of(),
        now);
  }

  private static Condition condition(ModelDeploymentStatus status, String type) {
    return status.conditions.stream()
        .filter(c -> c.getType().equals(type))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void readyNeedsEveryRolesMinimumAndCountsArePerRole() {
    ModelDeploymentStatus status =
        build(
            md(),
            List.of(
                pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
                pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)),
            T0);

    assertThat(status.verified).isEqualTo("1/2");
    assertThat(status.observedGeneration).isEqualTo(3L);
    assertThat(condition(status, "Ready").getStatus()).isEqualTo("False");
    assertThat(condition(status, "Ready").getMessage())
        .isEqualTo("role prefill: 0/1 verified, needs 1");
    assertThat(condition(status, "PoolsVerified").getReason()).isEqualTo("PodsNotVerified");
    assertThat(status.roles)
        .extracting(r -> r.name + ":" + r.verified + "/" + r.selected + ":" + r.smallestPoolTokens)
        .containsExactly("prefill:0/1:681280", "decode:1/1:4000000");
    assertThat(status.pods).extracting(p -> p.name).containsExactly("d-0", "p-0");
  }

  @Test
  void timestampsMoveOnlyWhereSomethingFlipped() {
    ModelDeployment md = md();
    md.setStatus(
        build(
            md,
            List.of(
                pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
                pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)),
            T0));

    ModelDeploymentStatus same =
        build(
            md,
            List.of(
                pod("p-0", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280),
                pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)),
            T1);
    assertThat(StatusComparison.same(md.getStatus(), same)).isTrue();

    ModelDeploymentStatus fixed =
        build(
            md,
            List.of(
                pod("p-0", "prefill", Verdict.Verified, GateReason.PoolSufficient, 2_040_000),
                pod("d-0", "decode", Verdict.Verified, GateReason.PoolSufficient, 4_000_000)),
            T1);
    assertThat(condition(fixed, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(fixed, "Ready").getLastTransitionTime()).isEqualTo("2026-12-01T09:30:00Z");
    assertThat(condition(fixed, "InvalidSpec").getLastTransitionTime())
        .isEqualTo("2026-12-01T08:00:00Z");
    assertThat(fixed.pods)
        .filteredOn(p -> p.name.equals("p-0"))
        .singleElement()
        .satisfies(p -> assertThat(p.lastTransitionTime).isEqualTo("2026-12-01T09:30:00Z"));
    assertThat(fixed.pods)
        .filteredOn(p -> p.name.equals("d-0"))
        .singleElement()
        .satisfies(p -> assertThat(p.lastTransitionTime).isEqualTo("2026-12-01T08:00:00Z"));
  }

  /**
   * A pod as a large deployment has them: a generated name, a containerd ID, the verdict's real
   * message, a note, and for one in a hundred a refusal or a failure.
   */
  private static PodAssessment realisticPod(int i) {
    String role = i % 2 == 0 ? "prefill" : "decode";
    String name = "glm-5-3-" + role + "-7f9c8d6b5d-" + String.format("%05d", i);
    Verdict verdict =
        i % 100 == 7 ? Verdict.Refused : i % 100 == 42 ? Verdict.Unknown : Verdict.Verified;
    GateReason reason =
        verdict == Verdict.Refused
            ? GateReason.PoolTooSmall
            : verdict == Verdict.Unknown ? GateReason.ProbeFailed : GateReason.PoolSufficient;
    long pool = verdict == Verdict.Refused ? 681_280 : 2_040_000;
    String message =
        verdict == Verdict.Unknown
            ? "GET http://10.1.2.3:30000/server_info timed out after 5000 ms"
            : "KV pool "
                + pool
                + " tokens (smallest of 8 data-parallel ranks) "
                + (verdict == Verdict.Refused ? "<" : ">=")
                + " context window 1048576 x 1.0, engine context 1048576 tokens";
    String containerID =
        "containerd://" + String.format("%032x%032x", i * 2_654_435_761L, i * 40_503L + 7);
    return new PodAssessment(
        new PodBuilder().withNewMetadata().withName(name).withUid("uid-" + i).endMetadata().build(),
        role,
        false,
        containerID,
        0,
        new PoolVerdict(verdict, reason, message),
        verdict == Verdict.Unknown
            ? null
            : new PoolObservation(
                pool,
                OptionalLong.of(1_048_576),
                "0.5.22",
                role,
                List.of("SGLang reports 8 data-parallel ranks; the smallest pool counts")),
        List.of("role " + role + ": engine reports disaggregation mode " + role),
        null,
        new io.kvguard.verdict.RejectionOutcome.Refused(400, "validation", 1_048_577L));
  }

  @Test
  void aModelDeploymentOverFiveThousandPodsStaysUnderOneMebibyte() throws Exception {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      assessments.add(realisticPod(i));
    }
    ModelDeployment md = md();
    md.setStatus(build(md, assessments, T0));
    // Two passes, as the operator runs: the second starts from the first's status.
    md.setStatus(build(md, assessments, T1));

    int bytes =
        new io.fabric8.kubernetes.client.utils.KubernetesSerialization()
            .asJson(md)
            .getBytes(java.nio.charset.StandardCharsets.UTF_8)
            .length;
    System.out.println("ModelDeployment of 5,000 pods: " + bytes + " bytes");
    // etcd refuses 1.5 MiB; a status write is refused long before that would be a fleet-wide
    // outage.
    assertThat(bytes).isLessThan(1024 * 1024);

    ModelDeploymentStatus status = md.getStatus();
    assertThat(status.verified).isEqualTo("4900/5000");
    assertThat(status.pods).hasSize(ModelDeploymentStatus.MAX_LISTED_PODS);
    assertThat(status.podsNotListed).isEqualTo(4_950);
    // The most pressing first: 50 refused pods fill the list before the 50 failed ones and any
    // verified one.
    assertThat(status.pods).allSatisfy(p -> assertThat(p.reason).isEqualTo("PoolTooSmall"));
    assertThat(status.roles)
        .allSatisfy(
            r ->
                assertThat(r.podsByReason.values().stream().mapToInt(Integer::intValue).sum())
                    .isEqualTo(r.selected));
    assertThat(status.roles.get(0).podsByReason)
        .containsExactlyInAnyOrderEntriesOf(Map.of("PoolSufficient", 2_450, "ProbeFailed", 50));
    assertThat(status.roles.get(1).podsByReason)
        .containsExactlyInAnyOrderEntriesOf(Map.of("PoolSufficient", 2_450, "PoolTooSmall", 50));
  }

  @Test
  void whenNotEveryPodFitsTheOnesNotVerifiedAreListedFirstAndTheRestCounted() {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    for (int i = 0; i < 60; i++) {
      Verdict verdict = i == 59 ? Verdict.Refused : i == 58 ? Verdict.Unknown : Verdict.Verified;
      GateReason reason =
          i == 59
              ? GateReason.PoolTooSmall
              : i == 58 ? GateReason.AwaitingProbe : GateReason.PoolSufficient;
      assessments.add(pod(String.format("p-%02d", i), "prefill", verdict, reason, 2_040_000));
    }

    ModelDeploymentStatus status = build(md(), assessments, T0);

    assertThat(status.pods).hasSize(50);
    assertThat(status.podsNotListed).isEqualTo(10);
    // The two pods that need attention are listed though their names sort last; the list reads by
    // name.
    assertThat(status.pods)
        .extracting(p -> p.name)
        .contains("p-58", "p-59")
        .isSorted()
        .doesNotContain("p-48", "p-49", "p-50");
    assertThat(status.roles.get(0).podsByReason)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("PoolSufficient", 58, "AwaitingProbe", 1, "PoolTooSmall", 1));
    assertThat(condition(status, "PoolsVerified").getMessage())
        .startsWith("2 of 60 selected pods not verified, e.g. p-58");
  }

  @Test
  void aVerifiedLabelOnlyPodIsListedAmongSixtyVerifiedPods() {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    for (int i = 0; i < 60; i++) {
      assessments.add(
          pod(
              String.format("p-%02d", i),
              "prefill",
              Verdict.Verified,
              GateReason.PoolSufficient,
              2_040_000,
              i == 59));
    }

    ModelDeploymentStatus status = build(md(), assessments, T0);

    assertThat(status.pods).hasSize(50);
    assertThat(status.podsNotListed).isEqualTo(10);
    assertThat(status.labelOnlyPods).isEqualTo(1);
    // Its name sorts last, yet status names it: it is the one pod the user has to restart.
    assertThat(status.pods)
        .filteredOn(p -> p.name.equals("p-59"))
        .singleElement()
        .satisfies(p -> assertThat(p.gating).isEqualTo("LabelOnly"));
    assertThat(status.pods).extracting(p -> p.name).isSorted().doesNotContain("p-49");
  }

  @Test
  void aVerifiedLabelOnlyPodComesAfterShutGatesAndBeforeVerifiedPodsWithTheGate() {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    assessments.addAll(pods("z-failed", 47, Verdict.Unknown, GateReason.ProbeFailed, 0, false));
    assessments.add(
        pod("z-refused", "prefill", Verdict.Refused, GateReason.PoolTooSmall, 681_280, true));
    assessments.add(pod("z-awaiting", "prefill", Verdict.Unknown, GateReason.AwaitingProbe, 0));
    assessments.add(
        pod(
            "z-label-only",
            "prefill",
            Verdict.Verified,
            GateReason.PoolSufficient,
            2_040_000,
            true));
    assessments.addAll(
        pods("a-verified", 9, Verdict.Verified, GateReason.PoolSufficient, 2_040_000, false));

    ModelDeploymentStatus status = build(md(), assessments, T0);

    // 47 failed, the refused and the awaiting pod fill 49 places; the label-only pod takes the last
    // one ahead of the verified pods with the gate, though every one of those sorts first by name.
    assertThat(status.pods).hasSize(50);
    assertThat(status.pods)
        .extracting(p -> p.name)
        .contains("z-refused", "z-awaiting", "z-label-only", "z-failed-00", "z-failed-46")
        .doesNotContain("a-verified-00");
    assertThat(status.pods)
        .filteredOn(p -> p.name.equals("z-label-only"))
        .singleElement()
        .satisfies(p -> assertThat(p.gating).isEqualTo("LabelOnly"));
  }

  @Test
  void whereEveryPodIsLabelOnlyPodsAwaitingAProbeStillComeBeforeVerifiedOnes() {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    assessments.addAll(
        pods("a-verified", 60, Verdict.Verified, GateReason.PoolSufficient, 2_040_000, true));
    assessments.addAll(pods("z-awaiting", 5, Verdict.Unknown, GateReason.AwaitingProbe, 0, true));

    ModelDeploymentStatus status = build(md(), assessments, T0);

    assertThat(status.pods)
        .extracting(p -> p.name)
        .hasSize(50)
        .contains(
            "z-awaiting-00", "z-awaiting-01", "z-awaiting-02", "z-awaiting-03", "z-awaiting-04");
  }

  @Test
  void labelOnlyPodsDoNotPushOutPodsWhoseGatesAreShutForAFailure() {
    List<PodAssessment> assessments = new java.util.ArrayList<>();
    assessments.addAll(pods("z-failed", 50, Verdict.Unknown, GateReason.ProbeFailed, 0, false));
    assessments.add(
        pod(
            "a-label-only",
            "prefill",
            Verdict.Verified,
            GateReason.PoolSufficient,
            2_040_000,
            true));

    ModelDeploymentStatus status = build(md(), assessments, T0);

    assertThat(status.pods)
        .hasSize(50)
        .allSatisfy(p -> assertThat(p.reason).isEqualTo("ProbeFailed"));
    // Left out of the list, still counted and named in its role's note.
    assertThat(status.labelOnlyPods).isEqualTo(1);
    assertThat(status.roles.get(0).notes).anySatisfy(n -> assertThat(n).contains("a-label-only"));
  }

  @Test
  void anInvalidSpecIsNeitherReadyNorVerified() {
    ModelDeploymentStatus status =
        StatusFactory.build(
            md(), List.of(), Map.of(), Optional.of("role prefill: bad"), List.of(), T0);
    assertThat(condition(status, "InvalidSpec").getStatus()).isEqualTo("True");
    assertThat(condition(status, "Ready").getReason()).isEqualTo("InvalidSpec");
    assertThat(condition(status, "PoolsVerified").getStatus()).isEqualTo("False");
  }
}

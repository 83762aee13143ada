package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionOutcome;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The assessment stage alone: a pure function of spec, pod, record, last results and a fixed clock.
 * No API server, no engine: the results are what a test says the probes answered.
 */
class AssessmentTest {
  private static final long WINDOW = 1_048_576;
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-12-04T06:00:00Z"), ZoneOffset.UTC);
  private static final Instant NOW = CLOCK.instant();
  private static final EngineProbes PROBES = EngineProbes.standard(EngineHttp.createDefault());
  private static final String CONTAINER = "containerd://engine-1";
  private static final PoolObservation ENOUGH =
      new PoolObservation(2_040_000, OptionalLong.of(WINDOW), "0.5.22", null, List.of());

  /**
   * Last results as a test states them, and credentials that are fine unless a test breaks them.
   */
  private static final class Results implements Assessment.Known {
    final Map<ProbeScheduler.Key, ProbeScheduler.Result<ProbeOutcome>> probes = new HashMap<>();
    final Map<ProbeScheduler.Key, ProbeScheduler.Result<RejectionOutcome>> rejections =
        new HashMap<>();
    ProbeCredentials.Lookup token = new ProbeCredentials.Lookup(Optional.empty(), null);

    @Override
    public Optional<ProbeScheduler.Result<ProbeOutcome>> probe(ProbeScheduler.Key key) {
      return Optional.ofNullable(probes.get(key));
    }

    @Override
    public Optional<ProbeScheduler.Result<RejectionOutcome>> rejection(ProbeScheduler.Key key) {
      return Optional.ofNullable(rejections.get(key));
    }

    @Override
    public ProbeCredentials.Lookup token() {
      return token;
    }

    @Override
    public ProbeTrust.Lookup tls() {
      return new ProbeTrust.Lookup(Optional.empty(), null);
    }

    @Override
    public EngineProbes probes() {
      return PROBES;
    }
  }

  private final RoleSpec serve = role("serve", Engine.SGLANG, Map.of("app", "glm"));
  private final ModelDeployment md = modelDeployment(serve);
  private final Results known = new Results();

  static ModelDeployment modelDeployment(RoleSpec role) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName("glm");
    md.getMetadata().setNamespace("inference");
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(WINDOW);
    spec.setRoles(List.of(role));
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(30);
    spec.setProbe(probe);
    md.setSpec(spec);
    return md;
  }

  static Pod pod(int restarts, String gateStatus) {
    PodBuilder builder =
        new PodBuilder()
            .withNewMetadata()
            .withName("serve-0")
            .withNamespace("inference")
            .withUid("uid-serve-0")
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("engine")
            .addNewPort()
            .withName("http")
            .withContainerPort(30000)
            .endPort()
            .endContainer()
            .addNewReadinessGate()
            .withConditionType(GateNames.CONDITION_TYPE)
            .endReadinessGate()
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .withPodIP("10.0.0.7")
            .withContainerStatuses(
                new ContainerStatusBuilder()
                    .withName("engine")
                    .withContainerID(CONTAINER)
                    .withRestartCount(restarts)
                    .withNewState()
                    .withNewRunning()
                    .endRunning()
                    .endState()
                    .build())
            .endStatus();
    if (gateStatus != null) {
      builder
          .editStatus()
          .addNewCondition()
          .withType(GateNames.CONDITION_TYPE)
          .withStatus(gateStatus)
          .endCondition()
          .endStatus();
    }
    return builder.build();
  }

  private Assessment.Assessed assess(Pod pod, VerdictRecord record, boolean respec, Instant now) {
    return Assessment.of(new Assessment.Input(md, serve, pod, record, respec, now), known);
  }

  private ProbeScheduler.Key key(Pod pod) {
    EngineProcess process =
        ((EngineProcess.Probeable) EngineProcess.resolve(pod, serve.getPort())).process();
    return new ProbeScheduler.Key("uid-serve-0", Assessment.how(md, serve, process));
  }

  private void answered(Pod pod, int restarts, ProbeOutcome outcome, Instant at) {
    known.probes.put(
        key(pod), new ProbeScheduler.Result<>(CONTAINER + "#" + restarts, outcome, at));
  }

  @Test
  void aProcessNothingIsKnownOfWaitsShutForItsFirstProbe() {
    Pod pod = pod(0, null);
    Assessment.Assessed assessed = assess(pod, null, false, NOW);

    assertThat(assessed.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(assessed.assessment().verdict().message())
        .isEqualTo("probing engine container engine (" + CONTAINER + ", restart 0)");
    assertThat(assessed.probe())
        .hasValueSatisfying(
            request -> {
              assertThat(request.key()).isEqualTo(key(pod));
              assertThat(request.endpoint().toString()).contains("10.0.0.7");
            });
    assertThat(assessed.probeKey()).isEqualTo(key(pod));
    assertThat(assessed.assessment().nextProbeAt()).isNull();
  }

  @Test
  void aFreshAnswerIsJudgedAndTheNextProbeFallsDueOnePeriodAfterIt() {
    Pod pod = pod(0, "True");
    answered(pod, 0, ProbeOutcome.observed(ENOUGH), NOW.minusSeconds(10));

    Assessment.Assessed assessed = assess(pod, null, false, NOW);

    assertThat(assessed.assessment().verdict().reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(assessed.assessment().observation()).isEqualTo(ENOUGH);
    assertThat(assessed.probe()).isEmpty();
    assertThat(assessed.assessment().nextProbeAt()).isEqualTo(NOW.plusSeconds(20));
  }

  @Test
  void anAnswerFallsDueATenthOfThePeriodButAtMostOneSecondBeforeItsTurn() {
    Pod pod = pod(0, "True");
    answered(pod, 0, ProbeOutcome.observed(ENOUGH), NOW);

    assertThat(assess(pod, null, false, NOW.plus(Duration.ofMillis(28_999))).probe()).isEmpty();
    Assessment.Assessed due = assess(pod, null, false, NOW.plusSeconds(29));
    assertThat(due.probe()).isPresent();
    assertThat(due.assessment().verdict().reason())
        .as("the answer stands while the re-probe runs")
        .isEqualTo(GateReason.PoolSufficient);
    assertThat(due.assessment().nextProbeAt()).isNull();
  }

  @Test
  void aFailedProbeIsRetriedAfterFiveSecondsNotAPeriod() {
    Pod pod = pod(0, null);
    answered(
        pod, 0, ProbeOutcome.failed("GET /server_info answered HTTP 503"), NOW.minusSeconds(3));
    Assessment.Assessed waiting = assess(pod, null, false, NOW);
    assertThat(waiting.assessment().verdict().reason()).isEqualTo(GateReason.ProbeFailed);
    assertThat(waiting.assessment().nextProbeAt()).isEqualTo(NOW.plusSeconds(2));
    assertThat(waiting.probe()).isEmpty();

    assertThat(assess(pod, null, false, NOW.plusSeconds(2)).probe()).isPresent();
  }

  @Test
  void anAnswerAboutTheContainerBeforeItsRestartCountsForNothing() {
    Pod restarted = pod(1, "True");
    answered(restarted, 0, ProbeOutcome.observed(ENOUGH), NOW.minusSeconds(1));

    Assessment.Assessed assessed = assess(restarted, null, false, NOW);

    assertThat(assessed.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(assessed.probe()).isPresent();
  }

  @Test
  void aSpecChangeAsksAgainWhileTheLastAnswerIsJudgedAgainstTheNewSpec() {
    Pod pod = pod(0, "True");
    answered(pod, 0, ProbeOutcome.observed(ENOUGH), NOW.minusSeconds(1));
    md.getSpec().setMinPoolRatio(2.5);

    Assessment.Assessed assessed = assess(pod, null, true, NOW);

    assertThat(assessed.assessment().verdict().reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(assessed.probe())
        .hasValueSatisfying(
            request ->
                assertThat(request.fresh(known.probes.get(key(pod))))
                    .as("a respec wants a new answer")
                    .isFalse());
  }

  @Test
  void aSignedRecordForTheSameContainerStandsInUntilTheProbeOnlyWhereTheConditionShowsItOpen() {
    VerdictRecord record =
        new VerdictRecord(
            "serve",
            "Verified",
            "PoolSufficient",
            CONTAINER,
            0,
            2_040_000L,
            null,
            WINDOW,
            "0.5.22",
            null,
            null,
            null,
            null,
            null,
            null);

    Assessment.Assessed open = assess(pod(0, "True"), record, false, NOW);
    assertThat(open.assessment().verdict().reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(open.assessment().notes())
        .contains(
            "verdict carried over from the pod's record for container "
                + CONTAINER
                + " until it is re-probed");
    assertThat(open.probe()).as("the engine is still probed").isPresent();

    Assessment.Assessed shut = assess(pod(0, "False"), record, false, NOW);
    assertThat(shut.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(shut.assessment().verdict().message())
        .contains("would open a gate its condition shows shut");

    Assessment.Assessed restarted = assess(pod(1, "True"), record, false, NOW);
    assertThat(restarted.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
  }

  @Test
  void withoutItsCredentialsAnEngineIsNotAskedAtAll() {
    known.token =
        new ProbeCredentials.Lookup(Optional.empty(), "Secret inference/engine-token not found");

    Assessment.Assessed assessed = assess(pod(0, null), null, false, NOW);

    assertThat(assessed.assessment().verdict().reason()).isEqualTo(GateReason.ProbeFailed);
    assertThat(assessed.assessment().verdict().message())
        .isEqualTo("probe credentials: Secret inference/engine-token not found");
    assertThat(assessed.probe()).isEmpty();
    assertThat(assessed.probeKey()).isNull();
  }

  @Test
  void aSufficientPoolWaitsForTheRejectionProbeWhenTheSpecAsksForIt() {
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    md.getSpec().setRejectionProbe(rejection);
    Pod pod = pod(0, null);
    answered(pod, 0, ProbeOutcome.observed(ENOUGH), NOW.minusSeconds(1));

    Assessment.Assessed pending = assess(pod, null, false, NOW);
    assertThat(pending.assessment().verdict().reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(pending.assessment().verdict().message()).contains("-token prompt pending");
    assertThat(pending.rejection())
        .hasValueSatisfying(
            request -> {
              assertThat(request.key()).isEqualTo(pending.rejectionKey());
              assertThat(request.promptTokens()).isGreaterThan(WINDOW);
            });

    long prompt = pending.rejection().orElseThrow().promptTokens();
    known.rejections.put(
        pending.rejectionKey(),
        new ProbeScheduler.Result<>(
            CONTAINER + "#0",
            new RejectionOutcome.Refused(400, "invalid_request_error", prompt),
            NOW));
    Assessment.Assessed refused = assess(pod, null, false, NOW);
    assertThat(refused.assessment().verdict().reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(refused.assessment().refusal()).isNotNull();
    assertThat(refused.rejection()).isEmpty();
  }
}

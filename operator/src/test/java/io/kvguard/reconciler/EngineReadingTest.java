package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.VersionRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Where a role's probe reads an engine (metricsPort), and what an operator restart keeps of an
 * upper bound.
 */
class EngineReadingTest {

  private static Pod triton() {
    return new PodBuilder()
        .withNewMetadata()
        .withName("triton-0")
        .withNamespace("ns")
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("triton")
        .addNewPort()
        .withName("http")
        .withContainerPort(8000)
        .endPort()
        .addNewPort()
        .withName("metrics")
        .withContainerPort(8002)
        .endPort()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .withPodIP("10.0.0.7")
        .addNewContainerStatus()
        .withName("triton")
        .withContainerID("containerd://abc")
        .withRestartCount(0)
        .withNewState()
        .withNewRunning()
        .endRunning()
        .endState()
        .endContainerStatus()
        .endStatus()
        .build();
  }

  @Test
  void metricsPortResolvesByNameOnTheEngineContainerOrByNumber() {
    EngineProcess byName =
        ((EngineProcess.Probeable)
                EngineProcess.resolve(
                    triton(), new IntOrString("http"), new IntOrString("metrics")))
            .process();
    assertThat(byName.port()).isEqualTo(8000);
    assertThat(byName.metricsPort()).isEqualTo(8002);
    EngineProcess byNumber =
        ((EngineProcess.Probeable)
                EngineProcess.resolve(triton(), new IntOrString("http"), new IntOrString(9400)))
            .process();
    assertThat(byNumber.metricsPort()).isEqualTo(9400);
    EngineProcess unset =
        ((EngineProcess.Probeable) EngineProcess.resolve(triton(), new IntOrString("http"), null))
            .process();
    assertThat(unset.metricsPort()).isEqualTo(8000);
    EngineProcess.NotProbeable missing =
        (EngineProcess.NotProbeable)
            EngineProcess.resolve(triton(), new IntOrString("http"), new IntOrString("prom"));
    assertThat(missing.misconfigured()).isTrue();
    assertThat(missing.message())
        .isEqualTo("engine container triton declares no port named prom (the role's metricsPort)");
  }

  private static RoleSpec role(Engine engine) {
    RoleSpec role = new RoleSpec();
    role.setName("serve");
    role.setEngine(engine);
    role.setPort(new IntOrString("http"));
    role.setSelector(new LabelSelectorBuilder().withMatchLabels(Map.of("app", "m")).build());
    return role;
  }

  /** What a pod's verdict record holds, written here as the status entry of the same fields. */
  private static VerdictRecord recorded(String poolSource) {
    PodVerdictStatus before = new PodVerdictStatus();
    before.role = "serve";
    before.verdict = "Verified";
    before.containerID = "containerd://abc";
    before.restartCount = 0;
    before.poolTokens = 262_144L;
    before.engineContextTokens = 131_072L;
    before.poolSource = poolSource;
    return PodRecords.of(before);
  }

  @Test
  void aRestartedOperatorKeepsAnUpperBoundAnUpperBound() {
    EngineProcess process =
        new EngineProcess("vllm", "containerd://abc", 0, "10.0.0.7", 8000, 8000);
    PoolObservation carried =
        CarryOver.recordedObservation(
            recorded("UPPER_BOUND_CONTEXT_HELD"), role(Engine.VLLM), process);
    assertThat(carried.poolSource()).isEqualTo(PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD);
    // The spec now asks 1.5 × the window: the recorded 262144-token product must not verify it as a
    // pool.
    PoolPolicy headroom = new PoolPolicy(131_072, 1.5, false, VersionRules.NONE);
    assertThat(PoolJudge.judge(headroom, ProbeOutcome.observed(carried)).reason())
        .isEqualTo(GateReason.PoolUpperBoundOnly);
    PoolObservation triton =
        CarryOver.recordedObservation(recorded("UPPER_BOUND"), role(Engine.TRTLLM), process);
    assertThat(
            PoolJudge.judge(new PoolPolicy(131_072, 1.0, false), ProbeOutcome.observed(triton))
                .reason())
        .isEqualTo(GateReason.PoolUpperBoundOnly);
    assertThat(
            CarryOver.recordedObservation(recorded(null), role(Engine.SGLANG), process)
                .poolSource())
        .isEqualTo(PoolObservation.PoolSource.ENGINE_KV_POOL);
    assertThat(
            CarryOver.recordedObservation(recorded("SOMETHING_ELSE"), role(Engine.VLLM), process))
        .isNull();
  }
}

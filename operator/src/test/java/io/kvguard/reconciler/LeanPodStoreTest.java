package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.GatePatchPlanner;
import io.kvguard.gate.GateState;
import io.kvguard.gate.RecordUpdate;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pod cache keeps a lean copy of each pod; every decision kvguard makes from a cached pod must
 * be the one it would make from the whole pod: the gate's patches (which test and address the pod's
 * fields by index) and the engine process it resolves.
 */
class LeanPodStoreTest {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");
  private static final List<GateDecision> DECISIONS =
      List.of(
          new GateDecision(true, GateReason.PoolSufficient, "pool fits"),
          new GateDecision(false, GateReason.PoolTooSmall, "pool too small"),
          new GateDecision(false, GateReason.AwaitingProbe, "awaiting"),
          GateDecision.policyRemoved("glm"));
  private static final VerdictRecord RECORD =
      new VerdictRecord(
          "serve",
          "Verified",
          "PoolSufficient",
          "containerd://engine0123456789abcdef",
          2,
          2_040_000L,
          "server_info",
          1_048_576L,
          "0.5.22",
          null,
          null,
          null,
          null,
          null,
          "2026-12-02T12:00:00Z");

  static Stream<Path> goldenPods() throws IOException {
    return Files.list(Path.of("src/test/resources/golden/gate"))
        .map(folder -> folder.resolve("in-pod.yaml"))
        .filter(Files::exists)
        .sorted();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("goldenPods")
  void everyGoldenPodIsGatedAlikeFromItsLeanCopy(Path file) throws IOException {
    Pod pod = SERIALIZATION.unmarshal(Files.readString(file), Pod.class);
    assertSameDecisions(pod, LeanPodStore.lean(pod));
  }

  @Test
  void aRealisticPodKeepsWhatKvguardReadsAndLittleElse() {
    Pod pod =
        realisticPod(
            Map.of(
                "kubectl.kubernetes.io/last-applied-configuration",
                "{\"x\":\"" + "y".repeat(8_000) + "\"}"));
    Pod lean = LeanPodStore.lean(pod);

    assertSameDecisions(pod, lean);
    assertThat(EngineProcess.resolve(lean, new IntOrString("http")))
        .isEqualTo(EngineProcess.resolve(pod, new IntOrString("http")));
    assertThat(EngineProcess.resolve(lean, new IntOrString(8000), new IntOrString("metrics")))
        .isEqualTo(EngineProcess.resolve(pod, new IntOrString(8000), new IntOrString("metrics")));
    assertThat(lean.getMetadata().getLabels()).isEqualTo(pod.getMetadata().getLabels());
    assertThat(lean.getMetadata().getManagedFields()).isEmpty();
    assertThat(lean.getSpec().getContainers()).allSatisfy(c -> assertThat(c.getEnv()).isEmpty());
    // The other annotations keep their keys (so the pod is known to have annotations), not their
    // values.
    assertThat(lean.getMetadata().getAnnotations())
        .containsOnlyKeys("kubectl.kubernetes.io/last-applied-configuration")
        .containsValue("");
    int whole = SERIALIZATION.asJson(pod).length();
    int kept = SERIALIZATION.asJson(lean).length();
    assertThat(kept).as("bytes kept of %s", whole).isLessThan(whole / 10);
  }

  @Test
  void aPodWhoseOnlyAnnotationIsDroppedStillGetsItsRecordAddedBesideIt() {
    // Before, the cache removed kubectl's last-applied annotation; a pod with no other annotation
    // then looked as if it had none, and the record write replaced the whole annotations object on
    // the server (losing kubectl's).
    Pod pod = realisticPod(Map.of("kubectl.kubernetes.io/last-applied-configuration", "{}"));
    RecordUpdate record = new RecordUpdate("glm", RECORD);
    String patch =
        GatePatchPlanner.conditionPatch(LeanPodStore.lean(pod), DECISIONS.get(0), record, NOW)
            .orElseThrow();
    assertThat(patch)
        .contains("/metadata/annotations/kvguard.io~1verdicts")
        .doesNotContain("\"path\":\"/metadata/annotations\",");
  }

  @Test
  void theVerdictRecordIsKeptWhole() {
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(GateNames.VERDICTS_ANNOTATION, "{\"glm\":{\"verdict\":\"Verified\"}}");
    annotations.put("prometheus.io/scrape", "true");
    Pod lean = LeanPodStore.lean(realisticPod(annotations));
    assertThat(lean.getMetadata().getAnnotations())
        .containsEntry(
            GateNames.VERDICTS_ANNOTATION, annotations.get(GateNames.VERDICTS_ANNOTATION))
        .containsEntry("prometheus.io/scrape", "");
  }

  private static void assertSameDecisions(Pod whole, Pod lean) {
    List<RecordUpdate> records = new ArrayList<>();
    records.add(null);
    records.add(RecordUpdate.remove("glm"));
    records.add(new RecordUpdate("glm", RECORD));
    for (GateDecision decision : DECISIONS) {
      for (RecordUpdate record : records) {
        assertThat(GatePatchPlanner.conditionPatch(lean, decision, record, NOW))
            .as("condition patch for %s, %s", decision, record)
            .isEqualTo(GatePatchPlanner.conditionPatch(whole, decision, record, NOW));
      }
      assertThat(GatePatchPlanner.labelPatch(lean, decision))
          .as("label patch for %s", decision)
          .isEqualTo(GatePatchPlanner.labelPatch(whole, decision));
    }
    assertThat(GatePatchPlanner.gateOf(lean, "glm"))
        .isEqualTo(GatePatchPlanner.gateOf(whole, "glm"));
    assertThat(GateState.conditionOpen(lean)).isEqualTo(GateState.conditionOpen(whole));
    assertThat(GateState.labelled(lean)).isEqualTo(GateState.labelled(whole));
    assertThat(SelectionIndex.podKeys(lean)).isEqualTo(SelectionIndex.podKeys(whole));
    assertThat(SelectionIndex.recordKeys(lean)).isEqualTo(SelectionIndex.recordKeys(whole));
  }

  /**
   * A pod as a Deployment of an inference server makes it: managed fields, 60 environment
   * variables, three containers.
   */
  static Pod realisticPod(Map<String, String> annotations) {
    List<EnvVar> env = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      env.add(new EnvVar("SETTING_" + i, "value-of-setting-" + i + "-" + "x".repeat(20), null));
    }
    PodBuilder builder =
        new PodBuilder()
            .withNewMetadata()
            .withName("serve-7f9c-0")
            .withNamespace("inference")
            .withUid("0f5e4a36-1b7d-4c1e-9a0f-2b6f0d1e8c11")
            .withResourceVersion("123456")
            .withLabels(Map.of("app", "glm", "role", "serve", "pod-template-hash", "7f9c"))
            .withAnnotations(annotations)
            .addToManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("kube-controller-manager")
                    .withOperation("Update")
                    .withApiVersion("v1")
                    .withFieldsType("FieldsV1")
                    .build())
            .addToManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("kubelet")
                    .withOperation("Update")
                    .withApiVersion("v1")
                    .withFieldsType("FieldsV1")
                    .withSubresource("status")
                    .build())
            .endMetadata()
            .withNewSpec()
            .addToContainers(
                new ContainerBuilder()
                    .withName("engine")
                    .withImage("lmsysorg/sglang:v0.5.22")
                    .withArgs("--model", "zai-org/GLM-5.3", "--tp", "8")
                    .withEnv(env)
                    .addNewPort()
                    .withName("http")
                    .withContainerPort(8000)
                    .endPort()
                    .addNewPort()
                    .withName("metrics")
                    .withContainerPort(9000)
                    .endPort()
                    .withNewResources()
                    .addToLimits(
                        "nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("8"))
                    .endResources()
                    .addNewVolumeMount()
                    .withName("model")
                    .withMountPath("/models")
                    .endVolumeMount()
                    .build())
            .addToContainers(
                new ContainerBuilder().withName("proxy").withImage("envoy").withEnv(env).build())
            .addToContainers(
                new ContainerBuilder()
                    .withName("log-shipper")
                    .withImage("fluent-bit")
                    .withEnv(env)
                    .build())
            .addNewReadinessGate()
            .withConditionType(GateNames.CONDITION_TYPE)
            .endReadinessGate()
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .withPodIP("10.1.2.3")
            .addNewCondition()
            .withType("Ready")
            .withStatus("False")
            .endCondition()
            .addNewCondition()
            .withType("ContainersReady")
            .withStatus("True")
            .endCondition()
            .endStatus();
    for (String container : List.of("engine", "proxy", "log-shipper")) {
      builder
          .editStatus()
          .addToContainerStatuses(
              new ContainerStatusBuilder()
                  .withName(container)
                  .withContainerID("containerd://" + container + "0123456789abcdef")
                  .withRestartCount(2)
                  .withReady(true)
                  .withImage("image")
                  .withImageID("sha256:0123456789abcdef")
                  .withNewState()
                  .withNewRunning()
                  .withStartedAt("2026-12-02T11:00:00Z")
                  .endRunning()
                  .endState()
                  .withNewLastState()
                  .withNewTerminated()
                  .withExitCode(137)
                  .withReason("OOMKilled")
                  .endTerminated()
                  .endLastState()
                  .build())
          .endStatus();
    }
    return builder.build();
  }
}

package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.gate.GateNames;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ValidatingAdmissionPolicy that confines kvguard's own pod writes (podWritePolicy, on wherever
 * the cluster serves it), rendered by Helm and its CEL evaluated with dev.cel on example old and
 * new pods, as the API server evaluates it on kvguard's writes ({@link EvaluatedPolicy}).
 */
class PodWritePolicyTest {
  private static final String KVGUARD =
      "system:serviceaccount:" + RenderedChart.NAMESPACE + ":kvguard";
  private static final String POLICY = "kvguard-pod-writes";
  private static final String METADATA_REFUSED =
      "kvguard may change no pod metadata but its labels (kvguard.io/verified,"
          + " llm-d.ai/context-length-range) and the kvguard.io/verdicts annotation"
          + " (on a pod with more than 1024 annotations, none but it while closing)";
  private static final String LABEL_REFUSED =
      "kvguard may change no pod label but kvguard.io/verified and llm-d.ai/context-length-range"
          + " (on a pod with more than 1024 labels it may only remove them)";
  private static final String CONDITION_REFUSED =
      "kvguard may change no pod condition but kvguard.io/pool-verified"
          + " (and none on a pod with more than 4096 conditions)";
  private static final String ONLY_CLOSE =
      "on a pod with more than 1024 labels or annotations or 256 conditions kvguard may only close"
          + " its gate (no kvguard.io/pool-verified True, no kvguard.io/verified label added or"
          + " changed)";

  /** A pod as the kubelet reports it, with kvguard's condition False and no label yet. */
  private static final String POD =
      """
      apiVersion: v1
      kind: Pod
      metadata:
        name: glm-prefill-0
        namespace: inference
        uid: 5b1f6c2e-6f8e-4c55-9a0e-3a3a6a1f0b11
        resourceVersion: "4711"
        labels: {app: glm, role: prefill, pod-template-hash: 7d9f8c6b5}
        annotations: {kubectl.kubernetes.io/default-container: sglang}
        ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: glm-prefill-7d9f8c6b5, uid: 0c7c, controller: true}]
        managedFields: [{manager: kubelet, operation: Update, subresource: status}]
      spec:
        readinessGates: [{conditionType: kvguard.io/pool-verified}]
        containers:
          - name: sglang
            image: lmsysorg/sglang:v0.5.22
            ports: [{name: http, containerPort: 30000}]
      status:
        phase: Running
        podIP: 10.1.2.3
        conditions:
          - {type: PodReadyToStartContainers, status: "True"}
          - {type: Initialized, status: "True"}
          - {type: kvguard.io/pool-verified, status: "False", reason: AwaitingProbe}
          - {type: Ready, status: "False"}
          - {type: ContainersReady, status: "True"}
          - {type: PodScheduled, status: "True"}
        containerStatuses: [{name: sglang, ready: true, restartCount: 0, containerID: "containerd://abc"}]
      """;

  private static EvaluatedPolicy policy;
  private static JsonNode binding;

  @BeforeAll
  static void render() {
    RenderedChart chart = RenderedChart.render("");
    policy =
        new EvaluatedPolicy(
            RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicy", POLICY)));
    binding = RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicyBinding", POLICY));
  }

  @Test
  void onByDefaultWhereTheClusterServesValidatingAdmissionPolicy() {
    assertThat(RenderedChart.render("").kind("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .contains(POLICY);
    assertThat(RenderedChart.notes(""))
        .contains("ValidatingAdmissionPolicy " + POLICY + " (Deny)")
        .doesNotContain("were skipped");
    assertThat(RenderedChart.render("podWritePolicy: {enabled: false}").kinds())
        .doesNotContain("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
  }

  /**
   * The chart supports Kubernetes 1.27: there the default renders without the policies and the
   * install notes say so, instead of failing the install.
   */
  @Test
  void skippedWithANoteOnAClusterWithoutValidatingAdmissionPolicy() {
    String manifests = RenderedChart.template(RenderedChart.CHART, "", "1.29.0");
    assertThat(RenderedChart.parse(manifests).kinds())
        .doesNotContain("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");
    assertThat(RenderedChart.notes("", "1.29.0").replaceAll("\\s+", " "))
        .contains(
            "The policies that confine kvguard's own writes (podWritePolicy) were skipped: this"
                + " cluster (v1.29.0) serves no ValidatingAdmissionPolicy in"
                + " admissionregistration.k8s.io/v1")
        .doesNotContain("ValidatingAdmissionPolicy " + POLICY);
    // A 1.29 cluster that serves the v1 API (assumeApiVersions stands in for Helm's discovery).
    String served =
        RenderedChart.template(
            RenderedChart.CHART,
            "assumeApiVersions: [admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy]",
            "1.29.0");
    assertThat(RenderedChart.parse(served).kind("ValidatingAdmissionPolicy")).isNotEmpty();
  }

  @Test
  void theBindingEnforcesThePolicyOnKvguardsServiceAccountOnly() {
    assertThat(binding.at("/spec/policyName").asText()).isEqualTo(POLICY);
    assertThat(binding.at("/spec/validationActions").toString()).isEqualTo("[\"Deny\"]");
    assertThat(policy.tree().at("/spec/failurePolicy").asText()).isEqualTo("Fail");
    assertThat(matches(update(POD, pod -> {}, "", KVGUARD))).isTrue();
    assertThat(matches(update(POD, pod -> {}, "status", "system:node:gpu-node-1"))).isFalse();
    assertThat(matches(update(POD, pod -> {}, "", "system:serviceaccount:kvguard-system:other")))
        .isFalse();
    JsonNode audit =
        RenderedChart.tree(
            RenderedChart.render("podWritePolicy: {validationActions: [Warn, Audit]}")
                .kindNamed("ValidatingAdmissionPolicyBinding", POLICY));
    assertThat(audit.at("/spec/validationActions").toString()).isEqualTo("[\"Warn\",\"Audit\"]");
  }

  @Test
  void kvguardMaySetAndClearItsLabel() {
    Map<String, Object> labelled =
        update(POD, pod -> labels(pod).put("kvguard.io/verified", "true"), "", KVGUARD);
    assertThat(refusals(labelled)).isEmpty();
    String labelledPod = write(apply(POD, pod -> labels(pod).put("kvguard.io/verified", "true")));
    assertThat(
            refusals(
                update(labelledPod, pod -> labels(pod).remove("kvguard.io/verified"), "", KVGUARD)))
        .isEmpty();
  }

  /**
   * With spec.routing.publishContextLengthLabel kvguard writes llm-d.ai/context-length-range in the
   * same patch as its verified label, overwrites a pod owner's value and removes it when the pod is
   * no longer verified (reference.md, "The context-length label").
   */
  @Test
  void kvguardMaySetOverwriteAndRemoveTheContextLengthLabel() {
    assertThat(
            refusals(
                update(
                    POD,
                    pod ->
                        labels(pod)
                            .put("kvguard.io/verified", "true")
                            .put(GateNames.CONTEXT_LENGTH_LABEL, "0-131072"),
                    "",
                    KVGUARD)))
        .isEmpty();
    String published =
        write(
            apply(
                POD,
                pod ->
                    labels(pod)
                        .put("kvguard.io/verified", "true")
                        .put(GateNames.CONTEXT_LENGTH_LABEL, "0-1000000")));
    assertThat(
            refusals(
                update(
                    published,
                    pod -> labels(pod).put(GateNames.CONTEXT_LENGTH_LABEL, "0-131072"),
                    "",
                    KVGUARD)))
        .isEmpty();
    assertThat(
            refusals(
                update(
                    published,
                    pod -> {
                      labels(pod).remove("kvguard.io/verified");
                      labels(pod).remove(GateNames.CONTEXT_LENGTH_LABEL);
                    },
                    "",
                    KVGUARD)))
        .isEmpty();
    // Any other llm-d label stays the pod owner's.
    assertThat(
            refusals(update(POD, pod -> labels(pod).put("llm-d.ai/role", "decode"), "", KVGUARD)))
        .containsExactly(LABEL_REFUSED);
  }

  @Test
  void kvguardMayWriteItsCondition() {
    assertThat(
            refusals(
                update(
                    POD,
                    pod ->
                        condition(pod, "kvguard.io/pool-verified")
                            .put("status", "True")
                            .put("reason", "PoolSufficient")
                            .put("message", "pool 2040000 >= window 1048576"),
                    "status",
                    KVGUARD)))
        .isEmpty();
    // A pod without the condition gets it appended.
    String without = write(apply(POD, pod -> ((ArrayNode) pod.at("/status/conditions")).remove(2)));
    assertThat(
            refusals(
                update(
                    without,
                    pod ->
                        ((ArrayNode) pod.at("/status/conditions"))
                            .addObject()
                            .put("type", "kvguard.io/pool-verified")
                            .put("status", "False")
                            .put("reason", "PoolTooSmall"),
                    "status",
                    KVGUARD)))
        .isEmpty();
  }

  /**
   * kvguard's verdict records ride on its pods/status write with the condition (issue 17 item 2).
   */
  @Test
  void kvguardMayWriteItsVerdictRecordsButNoOtherAnnotation() {
    String record =
        "{\"glm\":{\"role\":\"prefill\",\"verdict\":\"Verified\",\"reason\":\"PoolSufficient\"}}";
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> {
                      ((ObjectNode) pod.at("/metadata/annotations"))
                          .put("kvguard.io/verdicts", record);
                      condition(pod, "kvguard.io/pool-verified")
                          .put("status", "True")
                          .put("reason", "PoolSufficient");
                    },
                    "status",
                    KVGUARD)))
        .isEmpty();
    String recorded =
        write(
            apply(
                POD,
                pod ->
                    ((ObjectNode) pod.at("/metadata/annotations"))
                        .put("kvguard.io/verdicts", record)));
    assertThat(
            refusals(
                update(
                    recorded,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .put("kvguard.io/verdicts", record.replace("Verified", "Refused")),
                    "status",
                    KVGUARD)))
        .isEmpty();
    assertThat(
            refusals(
                update(
                    recorded,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .remove("kvguard.io/verdicts"),
                    "status",
                    KVGUARD)))
        .isEmpty();
    // A pod without annotations gets the whole map.
    String bare =
        write(apply(POD, pod -> ((ObjectNode) pod.get("metadata")).remove("annotations")));
    assertThat(
            refusals(
                update(
                    bare,
                    pod ->
                        ((ObjectNode) pod.get("metadata"))
                            .putObject("annotations")
                            .put("kvguard.io/verdicts", record),
                    "status",
                    KVGUARD)))
        .isEmpty();
    // Any other annotation, with it or alone, is refused.
    assertThat(
            refusals(
                update(
                    recorded,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .remove("kubectl.kubernetes.io/default-container"),
                    "status",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
    assertThat(
            refusals(
                update(
                    POD,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .put("kvguard.io/verdicts", record)
                            .put("example.com/other", "x"),
                    "status",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
  }

  @Test
  void kvguardMayNotChangeAnotherLabel() {
    assertThat(refusals(update(POD, pod -> labels(pod).put("app", "other"), "", KVGUARD)))
        .containsExactly(LABEL_REFUSED);
    assertThat(refusals(update(POD, pod -> labels(pod).remove("role"), "", KVGUARD))).hasSize(1);
    assertThat(refusals(update(POD, pod -> labels(pod).put("routing", "on"), "", KVGUARD)))
        .hasSize(1);
  }

  @Test
  void kvguardMayNotChangeAnotherCondition() {
    assertThat(
            refusals(
                update(
                    POD, pod -> condition(pod, "Ready").put("status", "True"), "status", KVGUARD)))
        .containsExactly(CONDITION_REFUSED);
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> ((ArrayNode) pod.at("/status/conditions")).remove(0),
                    "status",
                    KVGUARD)))
        .hasSize(1);
  }

  @Test
  void kvguardMayNotChangeTheSpecOrAnythingElse() {
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> ((ObjectNode) pod.at("/spec/containers/0")).put("image", "evil:latest"),
                    "",
                    KVGUARD)))
        .containsExactly("kvguard may not change a pod's spec");
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> ((ObjectNode) pod.at("/metadata/annotations")).put("x", "y"),
                    "",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> ((ObjectNode) pod.at("/metadata")).putArray("finalizers").add("x/y"),
                    "",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> ((ObjectNode) pod.get("status")).put("phase", "Failed"),
                    "status",
                    KVGUARD)))
        .containsExactly(
            "kvguard may change no pod status but the kvguard.io/pool-verified condition");
    // The API server's own bookkeeping on every write is not kvguard's change.
    assertThat(
            refusals(
                update(
                    POD,
                    pod -> {
                      ((ObjectNode) pod.get("metadata")).put("resourceVersion", "4712");
                      ((ArrayNode) pod.at("/metadata/managedFields"))
                          .addObject()
                          .put("manager", "kvguard");
                      labels(pod).put("kvguard.io/verified", "true");
                    },
                    "",
                    KVGUARD)))
        .isEmpty();
  }

  @Test
  void kvguardMayNotDeleteEvictOrExec() {
    Map<String, Object> delete = request("DELETE", "", KVGUARD, null, tree(POD));
    assertThat(refusals(delete)).containsExactly("kvguard may only update pods and their status");
    Map<String, Object> evict =
        request(
            "CREATE",
            "eviction",
            KVGUARD,
            tree("{apiVersion: policy/v1, kind: Eviction, metadata: {name: glm-prefill-0}}"),
            null);
    assertThat(refusals(evict)).containsExactly("kvguard may only update pods and their status");
    Map<String, Object> ephemeral =
        update(
            POD,
            pod ->
                ((ObjectNode) pod.get("spec"))
                    .putArray("ephemeralContainers")
                    .addObject()
                    .put("name", "debug")
                    .put("image", "busybox"),
            "ephemeralcontainers",
            KVGUARD);
    assertThat(refusals(ephemeral))
        .contains(
            "kvguard may only update pods and their status", "kvguard may not change a pod's spec");
  }

  /**
   * What the CEL iterates is bounded, so an evaluation's cost is too: past a bound kvguard may only
   * close the gate, never open it.
   */
  @Test
  void labelsAndConditionsAreIteratedOnlyUpToTheirBound() {
    // 1,023 labels and kvguard's: 1,024, the bound.
    String many = write(apply(POD, pod -> addLabels(pod, 1023 - labels(pod).size())));
    assertThat(
            refusals(
                update(many, pod -> labels(pod).put("kvguard.io/verified", "true"), "", KVGUARD)))
        .isEmpty();
    String tooMany = write(apply(many, pod -> labels(pod).put("team.example.com/one-more", "v")));
    assertThat(
            refusals(
                update(
                    tooMany, pod -> labels(pod).put("kvguard.io/verified", "true"), "", KVGUARD)))
        .containsExactly(ONLY_CLOSE, LABEL_REFUSED);
    String manyConditions = write(apply(POD, pod -> addConditions(pod, 251)));
    assertThat(
            refusals(
                update(
                    manyConditions,
                    pod -> condition(pod, "kvguard.io/pool-verified").put("status", "True"),
                    "status",
                    KVGUARD)))
        .containsExactly(ONLY_CLOSE);
  }

  // --- a tenant's pod beyond the bounds: kvguard's closing writes are admitted -----------------

  /** A pod kvguard verified: its label, its condition True and its verdict record. */
  private static final String VERIFIED =
      write(
          apply(
              POD,
              pod -> {
                labels(pod)
                    .put("kvguard.io/verified", "true")
                    .put(GateNames.CONTEXT_LENGTH_LABEL, "0-131072");
                ((ObjectNode) pod.at("/metadata/annotations"))
                    .put("kvguard.io/verdicts", "{\"glm\":{\"verdict\":\"Verified\"}}");
                condition(pod, "kvguard.io/pool-verified")
                    .put("status", "True")
                    .put("reason", "PoolSufficient");
              }));

  /**
   * kvguard's status write when it decides PoolTooSmall (GatePatchPlanner.conditionPatch): its
   * condition False and its verdict record, nothing else.
   */
  private static void closeCondition(ObjectNode pod) {
    condition(pod, "kvguard.io/pool-verified")
        .put("status", "False")
        .put("reason", "PoolTooSmall")
        .put("message", "pool 65536 < window 1048576");
    ((ObjectNode) pod.at("/metadata/annotations"))
        .put("kvguard.io/verdicts", "{\"glm\":{\"verdict\":\"Refused\"}}");
  }

  /**
   * kvguard's label write on the pod when it closes (GatePatchPlanner.labelPatch): both its labels
   * removed. The API server resets a pods write's status to the old one, so the status is as it
   * was.
   */
  private static void removeLabels(ObjectNode pod) {
    labels(pod).remove("kvguard.io/verified");
    labels(pod).remove(GateNames.CONTEXT_LENGTH_LABEL);
  }

  /**
   * The attack of the review: a tenant allowed to patch its pod (kubectl label) gives it 1,025
   * labels, then swaps the engine for one with a small pool. kvguard decides PoolTooSmall; both its
   * writes must pass or the condition stays True and the kubelet keeps the pod Ready. Opening stays
   * refused, and so does anything but kvguard's own change.
   */
  @Test
  void aTenantsThousandLabelsDoNotKeepKvguardFromClosingTheGate() {
    String pinned = write(apply(VERIFIED, pod -> addLabels(pod, 1025)));
    assertThat(refusals(update(pinned, PodWritePolicyTest::closeCondition, "status", KVGUARD)))
        .isEmpty();
    assertThat(refusals(update(pinned, PodWritePolicyTest::removeLabels, "", KVGUARD))).isEmpty();
    // The label alone, the context-length label staying (a condition already False).
    assertThat(
            refusals(update(pinned, pod -> labels(pod).remove("kvguard.io/verified"), "", KVGUARD)))
        .isEmpty();
    // Opening: the condition True, the label added back, or a wider context length.
    String closed =
        write(
            apply(
                pinned,
                pod -> {
                  closeCondition(pod);
                  removeLabels(pod);
                }));
    assertThat(
            refusals(
                update(
                    closed,
                    pod -> condition(pod, "kvguard.io/pool-verified").put("status", "True"),
                    "status",
                    KVGUARD)))
        .containsExactly(ONLY_CLOSE);
    assertThat(
            refusals(
                update(closed, pod -> labels(pod).put("kvguard.io/verified", "true"), "", KVGUARD)))
        .containsExactly(ONLY_CLOSE, LABEL_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> labels(pod).put(GateNames.CONTEXT_LENGTH_LABEL, "0-1000000"),
                    "",
                    KVGUARD)))
        .containsExactly(ONLY_CLOSE, LABEL_REFUSED);
    // Closing while changing anything else: another label removed or added, an annotation.
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      removeLabels(pod);
                      labels(pod).remove("app");
                    },
                    "",
                    KVGUARD)))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      removeLabels(pod);
                      labels(pod).put("routing", "on");
                    },
                    "",
                    KVGUARD)))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      labels(pod).remove("app");
                    },
                    "status",
                    KVGUARD)))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      removeLabels(pod);
                      ((ObjectNode) pod.at("/metadata/annotations")).remove("kvguard.io/verdicts");
                    },
                    "",
                    KVGUARD)))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      condition(pod, "Ready").put("status", "True");
                    },
                    "status",
                    KVGUARD)))
        .containsExactly(CONDITION_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      removeLabels(pod);
                      ((ObjectNode) pod.get("spec")).put("nodeName", "elsewhere");
                    },
                    "",
                    KVGUARD)))
        .containsExactly("kvguard may not change a pod's spec");
  }

  @Test
  void aTenantsThousandAnnotationsDoNotKeepKvguardFromClosingTheGate() {
    String pinned = write(apply(VERIFIED, pod -> addAnnotations(pod, 1025)));
    assertThat(refusals(update(pinned, PodWritePolicyTest::closeCondition, "status", KVGUARD)))
        .isEmpty();
    assertThat(refusals(update(pinned, PodWritePolicyTest::removeLabels, "", KVGUARD))).isEmpty();
    // The record removed with the condition closing.
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      ((ObjectNode) pod.at("/metadata/annotations")).remove("kvguard.io/verdicts");
                    },
                    "status",
                    KVGUARD)))
        .isEmpty();
    String closed = write(apply(pinned, PodWritePolicyTest::closeCondition));
    assertThat(
            refusals(
                update(
                    closed,
                    pod -> condition(pod, "kvguard.io/pool-verified").put("status", "True"),
                    "status",
                    KVGUARD)))
        .containsExactly(ONLY_CLOSE);
    // Another annotation added or removed with the closing write.
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      ((ObjectNode) pod.at("/metadata/annotations")).put("example.com/x", "y");
                    },
                    "status",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      ((ObjectNode) pod.at("/metadata/annotations"))
                          .remove("kubectl.kubernetes.io/default-container");
                    },
                    "status",
                    KVGUARD)))
        .containsExactly(METADATA_REFUSED);
  }

  /**
   * Conditions only a pods/status writer can add. Beyond 256 kvguard may only close, every other
   * condition compared up to 4096; beyond 4096 it writes no condition (its label removal still
   * passes).
   */
  @Test
  void manyConditionsDoNotKeepKvguardFromClosingTheGate() {
    String pinned = write(apply(VERIFIED, pod -> addConditions(pod, 300)));
    assertThat(refusals(update(pinned, PodWritePolicyTest::closeCondition, "status", KVGUARD)))
        .isEmpty();
    assertThat(refusals(update(pinned, PodWritePolicyTest::removeLabels, "", KVGUARD))).isEmpty();
    String closed = write(apply(pinned, PodWritePolicyTest::closeCondition));
    assertThat(
            refusals(
                update(
                    closed,
                    pod -> condition(pod, "kvguard.io/pool-verified").put("status", "True"),
                    "status",
                    KVGUARD)))
        .containsExactly(ONLY_CLOSE);
    assertThat(
            refusals(
                update(
                    pinned,
                    pod -> {
                      closeCondition(pod);
                      condition(pod, "example.com/c7").put("status", "False");
                    },
                    "status",
                    KVGUARD)))
        .containsExactly(CONDITION_REFUSED);
    String beyond = write(apply(VERIFIED, pod -> addConditions(pod, 4092)));
    assertThat(refusals(update(beyond, PodWritePolicyTest::removeLabels, "", KVGUARD))).isEmpty();
    assertThat(refusals(update(beyond, PodWritePolicyTest::closeCondition, "status", KVGUARD)))
        .containsExactly(ONLY_CLOSE, CONDITION_REFUSED);
    // All three at once.
    String all =
        write(
            apply(
                VERIFIED,
                pod -> {
                  addLabels(pod, 1025);
                  addAnnotations(pod, 1025);
                  addConditions(pod, 300);
                }));
    assertThat(refusals(update(all, PodWritePolicyTest::closeCondition, "status", KVGUARD)))
        .isEmpty();
    assertThat(refusals(update(all, PodWritePolicyTest::removeLabels, "", KVGUARD))).isEmpty();
  }

  private static void addLabels(ObjectNode pod, int count) {
    for (int i = 0; i < count; i++) {
      labels(pod).put("team.example.com/l" + i, "v");
    }
  }

  private static void addAnnotations(ObjectNode pod, int count) {
    for (int i = 0; i < count; i++) {
      ((ObjectNode) pod.at("/metadata/annotations")).put("team.example.com/a" + i, "v");
    }
  }

  private static void addConditions(ObjectNode pod, int count) {
    for (int i = 0; i < count; i++) {
      ((ArrayNode) pod.at("/status/conditions"))
          .addObject()
          .put("type", "example.com/c" + i)
          .put("status", "True");
    }
  }

  // --- evaluation, as the API server does it (EvaluatedPolicy)
  // -------------------------------------------------------------

  private static boolean matches(Map<String, Object> activation) {
    return policy.matches(activation);
  }

  private static List<String> refusals(Map<String, Object> activation) {
    return policy.refusals(activation);
  }

  private static Map<String, Object> update(
      String oldPod, Consumer<ObjectNode> change, String subResource, String user) {
    return EvaluatedPolicy.update(oldPod, change, subResource, user);
  }

  private static Map<String, Object> request(
      String operation, String subResource, String user, JsonNode object, JsonNode oldObject) {
    return EvaluatedPolicy.request(operation, subResource, user, object, oldObject);
  }

  private static ObjectNode apply(String pod, Consumer<ObjectNode> change) {
    return EvaluatedPolicy.changed(pod, change);
  }

  private static ObjectNode labels(ObjectNode pod) {
    return (ObjectNode) pod.at("/metadata/labels");
  }

  private static ObjectNode condition(ObjectNode pod, String type) {
    for (JsonNode c : pod.at("/status/conditions")) {
      if (c.path("type").asText().equals(type)) {
        return (ObjectNode) c;
      }
    }
    throw new AssertionError("no condition " + type);
  }

  private static JsonNode tree(String yaml) {
    return EvaluatedPolicy.parse(yaml);
  }

  private static String write(JsonNode node) {
    return EvaluatedPolicy.write(node);
  }
}

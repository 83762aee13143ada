package io.kvguard.helm;

import static io.kvguard.helm.EvaluatedPolicy.changed;
import static io.kvguard.helm.EvaluatedPolicy.parse;
import static io.kvguard.helm.EvaluatedPolicy.request;
import static io.kvguard.helm.EvaluatedPolicy.update;
import static io.kvguard.helm.EvaluatedPolicy.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.gate.GateNames;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The opt-in policy that keeps kvguard's gate kvguard's (gateWritePolicy): no tenant, controller or
 * kubelet can set, change or remove the verified label, the pool-verified condition or the verdict
 * records, nor create a pod born with them; what they do with everything else on their pods stays
 * theirs.
 */
class GateWritePolicyTest {
  private static final String KVGUARD =
      "system:serviceaccount:" + RenderedChart.NAMESPACE + ":kvguard";
  private static final String TENANT = "alice@example.com";
  private static final String KUBELET = "system:node:gpu-node-1";
  private static final String POLICY = "kvguard-gate-writes";
  private static final String LABEL_REFUSED = "only kvguard changes the kvguard.io/verified label";
  private static final String CONDITION_REFUSED =
      "only kvguard changes the kvguard.io/pool-verified condition"
          + " (and no one changes conditions on a pod with more than 256)";

  /** A pod kvguard verified: label, condition True, verdict record. */
  private static final String VERIFIED =
      """
      apiVersion: v1
      kind: Pod
      metadata:
        name: glm-prefill-0
        namespace: inference
        resourceVersion: "4711"
        labels: {app: glm, role: prefill, kvguard.io/verified: "true"}
        annotations: {kvguard.io/verdicts: '{"glm":{"verdict":"Verified"}}'}
      spec:
        readinessGates: [{conditionType: kvguard.io/pool-verified}]
        containers: [{name: sglang, image: lmsysorg/sglang:v0.5.22}]
      status:
        phase: Running
        conditions:
          - {type: Initialized, status: "True"}
          - {type: kvguard.io/pool-verified, status: "True", reason: PoolSufficient}
          - {type: Ready, status: "True"}
          - {type: ContainersReady, status: "True"}
      """;

  /** The same pod before kvguard judged it. */
  private static final String UNJUDGED =
      write(
          changed(
              VERIFIED,
              pod -> {
                labels(pod).remove(GateNames.VERIFIED_LABEL);
                ((ObjectNode) pod.get("metadata")).remove("annotations");
                ((ArrayNode) pod.at("/status/conditions")).remove(1);
                condition(pod, "Ready").put("status", "False");
              }));

  private static EvaluatedPolicy policy;

  @BeforeAll
  static void render() {
    RenderedChart chart = RenderedChart.render("gateWritePolicy: {enabled: true}");
    policy =
        new EvaluatedPolicy(
            RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicy", POLICY)));
    JsonNode binding =
        RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicyBinding", POLICY));
    assertThat(binding.at("/spec/policyName").asText()).isEqualTo(POLICY);
    assertThat(binding.at("/spec/validationActions").toString()).isEqualTo("[\"Deny\"]");
  }

  @Test
  void offByDefaultAndRefusedWhereTheClusterCannotEnforceIt() {
    assertThat(RenderedChart.render("").kind("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain(POLICY);
    assertThat(RenderedChart.notes("gateWritePolicy: {enabled: true}").replaceAll("\\s+", " "))
        .contains(
            "no one but kvguard may change the kvguard.io/verified label, the"
                + " kvguard.io/pool-verified condition or the kvguard.io/verdicts annotation");
    assertThatThrownBy(
            () ->
                RenderedChart.template(
                    RenderedChart.CHART, "gateWritePolicy: {enabled: true}", "1.29.0"))
        .hasMessageContaining(
            "gateWritePolicy.enabled=true needs ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1");
  }

  /** Listed watchNamespaces confine the policy to them, so other namespaces pay nothing for it. */
  @Test
  void onlyInTheNamespacesKvguardWatches() {
    assertThat(policy.tree().at("/spec/matchConstraints/namespaceSelector").isMissingNode())
        .isTrue();
    JsonNode confined =
        RenderedChart.tree(
            RenderedChart.render("gateWritePolicy: {enabled: true}\nwatchNamespaces: [inference]")
                .kindNamed("ValidatingAdmissionPolicy", POLICY));
    assertThat(
            confined.at("/spec/matchConstraints/namespaceSelector/matchExpressions/0").toString())
        .isEqualTo(
            "{\"key\":\"kubernetes.io/metadata.name\",\"operator\":\"In\",\"values\":[\"inference\"]}");
  }

  @Test
  void everyoneButKvguardIsHeldToIt() {
    assertThat(policy.matches(tenant(VERIFIED, pod -> {}))).isTrue();
    assertThat(policy.matches(update(VERIFIED, pod -> {}, "status", KUBELET))).isTrue();
    assertThat(
            policy.matches(
                update(
                    UNJUDGED,
                    pod -> labels(pod).put(GateNames.VERIFIED_LABEL, "true"),
                    "",
                    KVGUARD)))
        .isFalse();
  }

  @Test
  void aTenantCannotAddChangeOrRemoveTheVerifiedLabel() {
    assertThat(
            policy.refusals(
                tenant(UNJUDGED, pod -> labels(pod).put(GateNames.VERIFIED_LABEL, "true"))))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            policy.refusals(
                tenant(VERIFIED, pod -> labels(pod).put(GateNames.VERIFIED_LABEL, "yes"))))
        .containsExactly(LABEL_REFUSED);
    // Taking the label off is refused too: it is kvguard's record of what it routes.
    assertThat(
            policy.refusals(tenant(VERIFIED, pod -> labels(pod).remove(GateNames.VERIFIED_LABEL))))
        .containsExactly(LABEL_REFUSED);
    // Through pods/status, which keeps the metadata it is sent, as well.
    assertThat(
            policy.refusals(
                update(
                    UNJUDGED,
                    pod -> labels(pod).put(GateNames.VERIFIED_LABEL, "true"),
                    "status",
                    TENANT)))
        .containsExactly(LABEL_REFUSED);
  }

  @Test
  void aTenantMayEditEverythingElseOnItsPods() {
    assertThat(
            policy.refusals(
                tenant(
                    VERIFIED,
                    pod -> {
                      labels(pod).put("team", "inference").remove("role");
                      ((ObjectNode) pod.at("/metadata/annotations")).put("example.com/note", "x");
                    })))
        .isEmpty();
    assertThat(
            policy.refusals(
                update(
                    UNJUDGED,
                    pod ->
                        ((ArrayNode) pod.at("/status/conditions"))
                            .addObject()
                            .put("type", "example.com/warmed-up")
                            .put("status", "True"),
                    "status",
                    TENANT)))
        .isEmpty();
  }

  @Test
  void aTenantCannotForgeOrEraseTheVerdictRecords() {
    assertThat(
            policy.refusals(
                tenant(
                    VERIFIED,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .put(GateNames.VERDICTS_ANNOTATION, "{}"))))
        .containsExactly("only kvguard changes the kvguard.io/verdicts annotation");
    assertThat(
            policy.refusals(
                tenant(VERIFIED, pod -> ((ObjectNode) pod.get("metadata")).remove("annotations"))))
        .containsExactly("only kvguard changes the kvguard.io/verdicts annotation");
  }

  @Test
  void aTenantCannotOpenTheGateThroughPodsStatus() {
    String refused =
        write(
            changed(
                VERIFIED, pod -> condition(pod, GateNames.CONDITION_TYPE).put("status", "False")));
    assertThat(
            policy.refusals(
                update(
                    refused,
                    pod -> condition(pod, GateNames.CONDITION_TYPE).put("status", "True"),
                    "status",
                    TENANT)))
        .containsExactly(CONDITION_REFUSED);
    assertThat(
            policy.refusals(
                update(
                    UNJUDGED,
                    pod ->
                        ((ArrayNode) pod.at("/status/conditions"))
                            .addObject()
                            .put("type", GateNames.CONDITION_TYPE)
                            .put("status", "True"),
                    "status",
                    TENANT)))
        .containsExactly(CONDITION_REFUSED);
  }

  /**
   * The kubelet's status patch merges the conditions it does not own from the pod's current status,
   * in its own order: kvguard's condition arrives as it was and the write passes.
   */
  @Test
  void theKubeletsStatusUpdateKeepingTheConditionPasses() {
    assertThat(
            policy.refusals(
                update(
                    VERIFIED,
                    pod -> {
                      condition(pod, "Ready").put("status", "False");
                      condition(pod, "ContainersReady").put("status", "False");
                      ((ObjectNode) pod.get("status")).put("phase", "Failed");
                      ArrayNode conditions = (ArrayNode) pod.at("/status/conditions");
                      conditions.add(conditions.remove(1));
                    },
                    "status",
                    KUBELET)))
        .isEmpty();
    // A kubelet that changed it would be refused like anyone else.
    assertThat(
            policy.refusals(
                update(
                    VERIFIED,
                    pod -> condition(pod, GateNames.CONDITION_TYPE).put("status", "False"),
                    "status",
                    KUBELET)))
        .containsExactly(CONDITION_REFUSED);
  }

  @Test
  void aPodCannotBeBornVerified() {
    JsonNode labelled = parse(VERIFIED);
    ((ObjectNode) labelled.get("metadata")).remove("annotations");
    ((ObjectNode) labelled).remove("status");
    assertThat(policy.refusals(request("CREATE", "", TENANT, labelled, null)))
        .containsExactly(
            "only kvguard sets the kvguard.io/verified label: remove it from the pod (or its template)"
                + " and kvguard adds it once it has verified the pod");
    JsonNode recorded = parse(VERIFIED);
    labels((ObjectNode) recorded).remove(GateNames.VERIFIED_LABEL);
    ((ObjectNode) recorded).remove("status");
    // The ReplicaSet controller creates a Deployment's pods: the message reaches its FailedCreate
    // event.
    assertThat(
            policy.refusals(
                request(
                    "CREATE",
                    "",
                    "system:serviceaccount:kube-system:replicaset-controller",
                    recorded,
                    null)))
        .containsExactly(
            "only kvguard sets the kvguard.io/verdicts annotation: remove it from the pod (or its template)");
    assertThat(policy.refusals(request("CREATE", "", TENANT, parse(UNJUDGED), null))).isEmpty();
    // A Binding's annotations are merged into the pod it binds.
    JsonNode binding =
        parse(
            """
            apiVersion: v1
            kind: Binding
            metadata: {name: glm-prefill-0, annotations: {kvguard.io/verdicts: '{}'}}
            target: {kind: Node, name: gpu-node-1}
            """);
    assertThat(policy.refusals(request("CREATE", "binding", TENANT, binding, null))).hasSize(1);
  }

  /** Deleting or evicting a pod takes no gate away that a router could still follow. */
  @Test
  void deletionAndEvictionPassUnexamined() {
    assertThat(policy.constrains("DELETE", "pods")).isFalse();
    assertThat(policy.constrains("CREATE", "pods/eviction")).isFalse();
    assertThat(policy.constrains("UPDATE", "pods")).isTrue();
    assertThat(policy.constrains("UPDATE", "pods/status")).isTrue();
    assertThat(policy.constrains("CREATE", "pods")).isTrue();
    assertThat(policy.constrains("CREATE", "pods/binding")).isTrue();
  }

  @Test
  void conditionsAreComparedOnlyUpToTheirBound() {
    String many =
        write(
            changed(
                VERIFIED,
                pod -> {
                  for (int i = 0; i < 253; i++) {
                    ((ArrayNode) pod.at("/status/conditions"))
                        .addObject()
                        .put("type", "example.com/c" + i)
                        .put("status", "True");
                  }
                }));
    assertThat(
            policy.refusals(
                update(
                    many,
                    pod -> condition(pod, "Ready").put("status", "False"),
                    "status",
                    KUBELET)))
        .containsExactly(CONDITION_REFUSED);
  }

  /**
   * Going past a bound must not let a tenant through: labels and annotations are looked up, never
   * iterated, so 1,025 of them change nothing, and past 256 conditions every condition change is
   * refused, kvguard's included.
   */
  @Test
  void pastABoundATenantStillCannotChangeTheGate() {
    String crowded =
        write(
            changed(
                VERIFIED,
                pod -> {
                  for (int i = 0; i < 1025; i++) {
                    labels(pod).put("team.example.com/l" + i, "v");
                    ((ObjectNode) pod.at("/metadata/annotations"))
                        .put("team.example.com/a" + i, "v");
                  }
                  for (int i = 0; i < 300; i++) {
                    ((ArrayNode) pod.at("/status/conditions"))
                        .addObject()
                        .put("type", "example.com/c" + i)
                        .put("status", "True");
                  }
                }));
    String unjudged =
        write(
            changed(
                crowded,
                pod -> {
                  labels(pod).remove("kvguard.io/verified");
                  condition(pod, "kvguard.io/pool-verified").put("status", "False");
                }));
    assertThat(
            policy.refusals(
                tenant(unjudged, pod -> labels(pod).put("kvguard.io/verified", "true"))))
        .containsExactly(LABEL_REFUSED);
    assertThat(
            policy.refusals(
                update(
                    unjudged,
                    pod -> condition(pod, "kvguard.io/pool-verified").put("status", "True"),
                    "status",
                    TENANT)))
        .containsExactly(CONDITION_REFUSED);
    assertThat(
            policy.refusals(
                tenant(
                    crowded,
                    pod ->
                        ((ObjectNode) pod.at("/metadata/annotations"))
                            .put("kvguard.io/verdicts", "{}"))))
        .containsExactly("only kvguard changes the kvguard.io/verdicts annotation");
    // Writes that keep the gate pass: an unrelated label, and the kubelet's status update that
    // leaves the conditions as they were; a condition change past the bound, the kubelet's too,
    // does not.
    assertThat(policy.refusals(tenant(crowded, pod -> labels(pod).put("team", "b")))).isEmpty();
    assertThat(
            policy.refusals(
                update(
                    crowded,
                    pod -> ((ObjectNode) pod.get("status")).put("podIP", "10.1.2.4"),
                    "status",
                    KUBELET)))
        .isEmpty();
    assertThat(
            policy.refusals(
                update(
                    crowded,
                    pod -> condition(pod, "Ready").put("status", "False"),
                    "status",
                    KUBELET)))
        .containsExactly(CONDITION_REFUSED);
  }

  private static Map<String, Object> tenant(String pod, Consumer<ObjectNode> change) {
    return update(pod, change, "", TENANT);
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
}

package io.kvguard.helm;

import static io.kvguard.helm.EvaluatedPolicy.changed;
import static io.kvguard.helm.EvaluatedPolicy.request;
import static io.kvguard.helm.EvaluatedPolicy.update;
import static io.kvguard.helm.EvaluatedPolicy.write;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The policy that confines kvguard's write to its MutatingWebhookConfiguration to the caBundle
 * (rendered with podWritePolicy where the operator issues the webhook's certificate itself): the
 * operator's write passes, any write that would switch the gate webhook off or widen it is refused.
 */
class WebhookCaWritePolicyTest {
  private static final String KVGUARD =
      "system:serviceaccount:" + RenderedChart.NAMESPACE + ":kvguard";
  private static final String POLICY = "kvguard-webhook-ca-writes";
  private static final String WEBHOOKS_REFUSED =
      "kvguard may change nothing on its MutatingWebhookConfiguration but"
          + " webhooks[*].clientConfig.caBundle (and nothing on one with more than 16 webhooks)";
  private static final String BUNDLE =
      Base64.getEncoder()
          .encodeToString(
              "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".getBytes());

  private static EvaluatedPolicy policy;
  private static JsonNode binding;

  /** The configuration as Helm installed it, with the API server's bookkeeping. */
  private static String configuration;

  @BeforeAll
  static void render() {
    RenderedChart chart = RenderedChart.render("");
    policy =
        new EvaluatedPolicy(
            RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicy", POLICY)));
    binding = RenderedChart.tree(chart.kindNamed("ValidatingAdmissionPolicyBinding", POLICY));
    ObjectNode installed =
        (ObjectNode) RenderedChart.tree(chart.one(MutatingWebhookConfiguration.class));
    ((ObjectNode) installed.get("metadata"))
        .put("resourceVersion", "812")
        .put("generation", 1)
        .putObject("annotations")
        .put("meta.helm.sh/release-name", "kvguard");
    configuration = write(installed);
  }

  @Test
  void renderedWhereTheOperatorWritesTheCaBundle() {
    assertThat(binding.at("/spec/policyName").asText()).isEqualTo(POLICY);
    assertThat(binding.at("/spec/validationActions").toString()).isEqualTo("[\"Deny\"]");
    assertThat(policy.tree().at("/spec/failurePolicy").asText()).isEqualTo("Fail");
    // cert-manager's CA injector writes the caBundle then; kvguard has no verb on the
    // configuration.
    assertThat(
            RenderedChart.render(
                    "webhook: {certManager: {enabled: true}}\n"
                        + "assumeApiVersions: [cert-manager.io/v1]")
                .kind("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain(POLICY)
        .contains("kvguard-pod-writes");
    assertThat(RenderedChart.render("webhook: {enabled: false}").kind("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .doesNotContain(POLICY);
    assertThat(
            RenderedChart.render("podWritePolicy: {enabled: false}")
                .kind("ValidatingAdmissionPolicy"))
        .isEmpty();
  }

  @Test
  void onlyKvguardsServiceAccountIsConfined() {
    assertThat(policy.matches(updateWith(c -> caBundle(c, BUNDLE), KVGUARD))).isTrue();
    assertThat(policy.matches(updateWith(c -> failurePolicy(c, "Fail"), "kube:admin"))).isFalse();
    assertThat(
            policy.matches(
                updateWith(
                    c -> caBundle(c, BUNDLE),
                    "system:serviceaccount:cert-manager:cert-manager-cainjector")))
        .isFalse();
  }

  /** The operator's JSON patch: an "add" of /webhooks/i/clientConfig/caBundle, first or renewed. */
  @Test
  void kvguardMaySetAndReplaceTheCaBundle() {
    assertThat(policy.refusals(updateWith(c -> caBundle(c, BUNDLE), KVGUARD))).isEmpty();
    String withBundle = write(changed(configuration, c -> caBundle(c, BUNDLE)));
    assertThat(
            policy.refusals(
                update(
                    withBundle,
                    c -> {
                      caBundle(c, BUNDLE + "TUlJQg==");
                      ((ObjectNode) c.get("metadata")).put("resourceVersion", "813");
                      ((ObjectNode) c.get("metadata")).put("generation", 2);
                    },
                    "",
                    KVGUARD)))
        .isEmpty();
  }

  @Test
  void kvguardMayNotChangeWhatTheWebhookMatchesOrHowItFails() {
    assertThat(policy.refusals(updateWith(c -> failurePolicy(c, "Fail"), KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
    assertThat(
            policy.refusals(
                updateWith(
                    c ->
                        ((ObjectNode) webhook(c).get("rules").get(0))
                            .putArray("operations")
                            .add("UPDATE"),
                    KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
    // A namespaceSelector nothing matches switches injection off for everyone.
    assertThat(
            policy.refusals(
                updateWith(
                    c ->
                        ((ObjectNode) webhook(c).at("/namespaceSelector/matchLabels"))
                            .put("kvguard.io/readiness-gate-injection", "never"),
                    KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
    assertThat(
            policy.refusals(
                updateWith(
                    c ->
                        webhook(c)
                            .putObject("objectSelector")
                            .putObject("matchLabels")
                            .put("nothing", "matches"),
                    KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
    assertThat(
            policy.refusals(
                updateWith(
                    c ->
                        ((ObjectNode) webhook(c).at("/clientConfig/service"))
                            .put("name", "elsewhere"),
                    KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
  }

  @Test
  void kvguardMayNotAddOrRemoveAWebhook() {
    assertThat(
            policy.refusals(
                updateWith(
                    c -> {
                      ObjectNode copy = webhook(c).deepCopy();
                      copy.put("name", "everything.example.com");
                      ((ArrayNode) c.get("webhooks")).add(copy);
                    },
                    KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
    assertThat(policy.refusals(updateWith(c -> ((ArrayNode) c.get("webhooks")).remove(0), KVGUARD)))
        .containsExactly(WEBHOOKS_REFUSED);
  }

  @Test
  void kvguardMayNotChangeItsMetadataOrOtherConfigurations() {
    assertThat(
            policy.refusals(
                updateWith(
                    c -> {
                      caBundle(c, BUNDLE);
                      ((ObjectNode) c.at("/metadata/annotations")).put("example.com/x", "y");
                    },
                    KVGUARD)))
        .containsExactly(
            "kvguard may change no metadata of its MutatingWebhookConfiguration (labels, annotations, finalizers)");
    String other =
        write(changed(configuration, c -> ((ObjectNode) c.get("metadata")).put("name", "istio")));
    assertThat(policy.refusals(update(other, c -> caBundle(c, BUNDLE), "", KVGUARD)))
        .contains(
            "kvguard may only update its own MutatingWebhookConfiguration (kvguard-readiness-gate)");
    assertThat(
            policy.refusals(
                request("DELETE", "", KVGUARD, null, EvaluatedPolicy.parse(configuration))))
        .contains(
            "kvguard may only update its own MutatingWebhookConfiguration (kvguard-readiness-gate)");
  }

  private static Map<String, Object> updateWith(Consumer<ObjectNode> change, String user) {
    return update(configuration, change, "", user);
  }

  private static ObjectNode webhook(ObjectNode configuration) {
    List<JsonNode> webhooks = configuration.findValues("webhooks");
    return (ObjectNode) webhooks.get(0).get(0);
  }

  private static void caBundle(ObjectNode configuration, String bundle) {
    ((ObjectNode) webhook(configuration).get("clientConfig")).put("caBundle", bundle);
  }

  private static void failurePolicy(ObjectNode configuration, String value) {
    webhook(configuration).put("failurePolicy", value);
  }
}

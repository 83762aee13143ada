package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.kvguard.reconciler.LabelSelectors;
import io.kvguard.webhook.WebhookServer;
import io.kvguard.webhook.WebhookSettings;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The readiness-gate webhook as the chart renders it (issue 18 §1). */
class ChartWebhookTest {
  private static final String CERT_MANAGER = "assumeApiVersions: [cert-manager.io/v1]\n";

  @Test
  void onByDefaultForPodCreatesInLabelledNamespacesOnlyAndNeverDenyingWhenUnreachable() {
    RenderedChart chart = RenderedChart.render("");
    MutatingWebhook webhook = chart.one(MutatingWebhookConfiguration.class).getWebhooks().get(0);

    assertThat(chart.one(MutatingWebhookConfiguration.class).getWebhooks()).hasSize(1);
    assertThat(webhook.getAdmissionReviewVersions()).containsExactly("v1");
    assertThat(webhook.getSideEffects()).isEqualTo("None");
    assertThat(webhook.getFailurePolicy()).isEqualTo("Ignore");
    assertThat(webhook.getTimeoutSeconds()).isBetween(1, 10);
    assertThat(webhook.getReinvocationPolicy()).isEqualTo("IfNeeded");
    assertThat(webhook.getRules())
        .singleElement()
        .satisfies(
            rule -> {
              assertThat(rule.getApiGroups()).containsExactly("");
              assertThat(rule.getApiVersions()).containsExactly("v1");
              assertThat(rule.getOperations()).containsExactly("CREATE");
              assertThat(rule.getResources()).containsExactly("pods");
            });
    LabelSelector namespaces = webhook.getNamespaceSelector();
    assertThat(
            LabelSelectors.matches(
                namespaces, Map.of("kvguard.io/readiness-gate-injection", "enabled")))
        .isTrue();
    assertThat(
            LabelSelectors.matches(namespaces, Map.of("kubernetes.io/metadata.name", "inference")))
        .isFalse();
    assertThat(
            LabelSelectors.matches(
                namespaces, Map.of("kvguard.io/readiness-gate-injection", "disabled")))
        .isFalse();
  }

  /**
   * kvguard's own pods (and its CRD upgrade hook's) are never sent to the webhook they serve, even
   * where the release's namespace is labelled (the AWS Load Balancer Controller's users were bitten
   * by that): the release's namespace is left out by kubernetes.io/metadata.name, which the API
   * server sets and no tenant can claim. Not by a pod label: a label kvguard's pods carry is a
   * label any tenant can put on its pods to escape the gate.
   */
  @Test
  void kvguardsOwnPodsAreNeverSentToTheWebhookTheyServe() {
    RenderedChart chart = RenderedChart.renderWithHooks("");
    MutatingWebhook webhook = chart.one(MutatingWebhookConfiguration.class).getWebhooks().get(0);
    Map<String, String> releaseNamespace =
        Map.of(
            "kvguard.io/readiness-gate-injection",
            "enabled",
            "kubernetes.io/metadata.name",
            RenderedChart.NAMESPACE);
    Map<String, String> operatorPod =
        chart.one(Deployment.class).getSpec().getTemplate().getMetadata().getLabels();

    assertThat(sent(webhook, releaseNamespace, operatorPod)).isFalse();
    chart.all().stream()
        .filter(o -> o.getKind().equals("Job"))
        .forEach(
            job -> {
              JsonNode labels = RenderedChart.tree(job).at("/spec/template/metadata/labels");
              Map<String, String> podLabels = new java.util.HashMap<>();
              labels
                  .fields()
                  .forEachRemaining(e -> podLabels.put(e.getKey(), e.getValue().asText()));
              assertThat(sent(webhook, releaseNamespace, podLabels)).as("hook pod").isFalse();
            });
    assertThat(
            sent(
                webhook,
                Map.of(
                    "kvguard.io/readiness-gate-injection",
                    "enabled",
                    "kubernetes.io/metadata.name",
                    "inference"),
                Map.of("app", "glm")))
        .isTrue();
  }

  @Test
  void aTenantPodWearingKvguardsLabelsIsStillSent() {
    RenderedChart chart = RenderedChart.render("");
    MutatingWebhook webhook = chart.one(MutatingWebhookConfiguration.class).getWebhooks().get(0);
    Map<String, String> disguised =
        new java.util.HashMap<>(
            chart.one(Deployment.class).getSpec().getTemplate().getMetadata().getLabels());
    disguised.put("app", "glm");

    assertThat(
            sent(
                webhook,
                Map.of(
                    "kvguard.io/readiness-gate-injection",
                    "enabled",
                    "kubernetes.io/metadata.name",
                    "inference"),
                disguised))
        .isTrue();
  }

  /** What the API server does with the two selectors: an absent one selects everything. */
  private static boolean sent(
      MutatingWebhook webhook, Map<String, String> namespaceLabels, Map<String, String> podLabels) {
    return LabelSelectors.matches(webhook.getNamespaceSelector(), namespaceLabels)
        && (webhook.getObjectSelector() == null
            || LabelSelectors.matches(webhook.getObjectSelector(), podLabels));
  }

  @Test
  void theApiServerReachesTheOperatorsWebhookPortThroughItsService() {
    RenderedChart chart = RenderedChart.render("");
    MutatingWebhook webhook = chart.one(MutatingWebhookConfiguration.class).getWebhooks().get(0);
    Deployment deployment = chart.one(Deployment.class);
    Container operator = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    Service service = chart.named(Service.class, webhook.getClientConfig().getService().getName());

    assertThat(webhook.getClientConfig().getService().getNamespace())
        .isEqualTo(RenderedChart.NAMESPACE);
    assertThat(webhook.getClientConfig().getService().getPath()).isEqualTo(WebhookServer.PATH);
    assertThat(webhook.getClientConfig().getService().getPort()).isEqualTo(443);
    assertThat(service.getSpec().getSelector())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(service.getSpec().getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getPort()).isEqualTo(443);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("webhook");
            });
    // The metrics ServiceMonitor selects the operator's component label; this Service is not
    // scraped.
    assertThat(service.getMetadata().getLabels())
        .containsEntry("app.kubernetes.io/component", "webhook");
    WebhookSettings settings = WebhookSettings.fromEnvironment(ChartDefaultsTest.env(operator));
    assertThat(settings.enabled()).isTrue();
    assertThat(operator.getPorts())
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("webhook");
              assertThat(p.getContainerPort()).isEqualTo(settings.port()).isEqualTo(9443);
            });
    assertThat(settings.certDir()).hasToString(WebhookSettings.DEFAULT_CERT_DIR);
    // The certificate the operator issues names what the API server dials,
    // <service>.<namespace>.svc.
    assertThat(settings.dnsNames(RenderedChart.NAMESPACE))
        .contains(service.getMetadata().getName() + "." + RenderedChart.NAMESPACE + ".svc");
    assertThat(settings.configuration())
        .isEqualTo(chart.one(MutatingWebhookConfiguration.class).getMetadata().getName());
  }

  @Test
  void withoutCertManagerTheOperatorIssuesTheCertificateAndNoRenderCarriesOne() {
    String first = RenderedChart.template(RenderedChart.CHART, "");
    String second = RenderedChart.template(RenderedChart.CHART, "");
    RenderedChart chart = RenderedChart.parse(first);
    MutatingWebhook webhook = chart.one(MutatingWebhookConfiguration.class).getWebhooks().get(0);
    Container operator =
        chart.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);

    // No CA from a template function: two renders are identical, and helm upgrade leaves the
    // operator's caBundle.
    assertThat(second).isEqualTo(first);
    assertThat(webhook.getClientConfig().getCaBundle()).isNull();
    assertThat(chart.all().stream().filter(o -> o.getKind().equals("Secret"))).isEmpty();
    assertThat(WebhookSettings.fromEnvironment(ChartDefaultsTest.env(operator)).certSecret())
        .isEqualTo("kvguard-webhook-tls");
    assertThat(chart.kind("Certificate")).isEmpty();
  }

  @Test
  void withCertManagerItsCertificateIsMountedAndItsCaInjected() {
    RenderedChart chart =
        RenderedChart.render(CERT_MANAGER + "webhook: {certManager: {enabled: true}}");
    MutatingWebhookConfiguration configuration = chart.one(MutatingWebhookConfiguration.class);
    Deployment deployment = chart.one(Deployment.class);
    Container operator = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    HasMetadata certificate = chart.kind("Certificate").get(0);
    JsonNode spec = RenderedChart.tree(certificate).get("spec");

    assertThat(configuration.getMetadata().getAnnotations())
        .containsEntry(
            "cert-manager.io/inject-ca-from",
            RenderedChart.NAMESPACE + "/" + certificate.getMetadata().getName());
    assertThat(spec.get("dnsNames").get(0).asText())
        .isEqualTo("kvguard-webhook." + RenderedChart.NAMESPACE + ".svc");
    assertThat(spec.at("/issuerRef/name").asText())
        .isEqualTo(chart.kind("Issuer").get(0).getMetadata().getName());
    String secret = spec.get("secretName").asText();
    assertThat(deployment.getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo(secret));
    assertThat(operator.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getMountPath()).isEqualTo(WebhookSettings.DEFAULT_CERT_DIR);
              assertThat(m.getReadOnly()).isTrue();
            });
    WebhookSettings settings = WebhookSettings.fromEnvironment(ChartDefaultsTest.env(operator));
    assertThat(settings.selfManaged()).as("the operator issues nothing").isFalse();

    RenderedChart ownIssuer =
        RenderedChart.render(
            CERT_MANAGER
                + "webhook: {certManager: {enabled: true, issuerRef: {kind: ClusterIssuer, name: corp-ca}}}");
    assertThat(ownIssuer.kind("Issuer")).isEmpty();
    assertThat(
            RenderedChart.tree(ownIssuer.kind("Certificate").get(0))
                .at("/spec/issuerRef/name")
                .asText())
        .isEqualTo("corp-ca");
    assertThatThrownBy(() -> RenderedChart.render("webhook: {certManager: {enabled: true}}"))
        .hasMessageContaining("cert-manager.io/v1");
  }

  @Test
  void failurePolicyAndTimeoutAreConfigurableWithinBounds() {
    MutatingWebhook webhook =
        RenderedChart.render("webhook: {failurePolicy: Fail, timeoutSeconds: 10}")
            .one(MutatingWebhookConfiguration.class)
            .getWebhooks()
            .get(0);

    assertThat(webhook.getFailurePolicy()).isEqualTo("Fail");
    assertThat(webhook.getTimeoutSeconds()).isEqualTo(10);
    assertThatThrownBy(() -> RenderedChart.render("webhook: {timeoutSeconds: 30}"))
        .hasMessageContaining("timeoutSeconds");
  }

  @Test
  void watchedNamespacesBoundTheWebhookToo() {
    MutatingWebhook webhook =
        RenderedChart.render("watchNamespaces: [inference]")
            .one(MutatingWebhookConfiguration.class)
            .getWebhooks()
            .get(0);

    assertThat(
            LabelSelectors.matches(
                webhook.getNamespaceSelector(),
                Map.of(
                    "kvguard.io/readiness-gate-injection",
                    "enabled",
                    "kubernetes.io/metadata.name",
                    "inference")))
        .isTrue();
    assertThat(
            LabelSelectors.matches(
                webhook.getNamespaceSelector(),
                Map.of(
                    "kvguard.io/readiness-gate-injection",
                    "enabled",
                    "kubernetes.io/metadata.name",
                    "batch")))
        .isFalse();
  }

  @Test
  void theInstallNotesSayHowToOptANamespaceIn() {
    assertThat(RenderedChart.notes(""))
        .contains(
            "kubectl label namespace <namespace> kvguard.io/readiness-gate-injection=enabled");
    assertThat(RenderedChart.notes("webhook: {enabled: false}"))
        .doesNotContain("readiness-gate-injection");
  }

  @Test
  void offRendersNoWebhookAndTheOperatorServesNone() {
    RenderedChart chart = RenderedChart.render("webhook: {enabled: false}");
    Container operator =
        chart.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);

    assertThat(chart.all(MutatingWebhookConfiguration.class)).isEmpty();
    assertThat(chart.all(Service.class))
        .extracting(s -> s.getMetadata().getName())
        .containsExactly("kvguard-metrics");
    assertThat(WebhookSettings.fromEnvironment(ChartDefaultsTest.env(operator)).enabled())
        .isFalse();
    assertThat(operator.getPorts()).noneMatch(p -> p.getName().equals("webhook"));
  }
}

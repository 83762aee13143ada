package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.kvguard.webhook.WebhookSettings;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every name the chart builds is valid for any release name, and whatever refers to an object (the
 * operator's environment, RBAC resourceNames, role bindings, the webhook's client config,
 * cert-manager's references) names exactly the object rendered.
 */
class ChartNamesTest {
  /** Helm's longest release name (53 characters: helm/helm pkg/chartutil/validate_name.go). */
  private static final String LONGEST_RELEASE =
      "inference-gateway-production-eu-west-1-llm-serving-ab";

  /** The longest fullnameOverride values.schema.json allows (63 characters). */
  private static final String LONGEST_FULLNAME =
      "kvguard-readiness-gates-for-llm-serving-pools-in-every-region-0";

  /** Every optional object that carries a built name, rendered at once. */
  private static final String EVERYTHING_ON =
      RenderedChart.MONITORING_API
          + "metrics: {serviceMonitor: {enabled: true}, prometheusRule: {enabled: true},"
          + " dashboard: {enabled: true}}\n"
          + "networkPolicy: {enabled: true, apiServer: {cidrs: [10.0.0.1/32]}}\n"
          + "gateWritePolicy: {enabled: true}\n";

  private static final String WITH_CERT_MANAGER =
      "assumeApiVersions: [monitoring.coreos.com/v1, cert-manager.io/v1]\n"
          + "webhook: {certManager: {enabled: true}}\n";

  /** A Service's name: a DNS-1035 label (starts with a letter). */
  private static final Pattern DNS_1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");

  /** Every other name the chart builds: a DNS-1123 subdomain (253 characters). */
  private static final Pattern DNS_1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /**
   * Kinds whose names are bounded at 63: a Service's is a DNS-1035 label, a cert-manager
   * Certificate's and a Job's become label values, a Deployment's pods are named after it.
   */
  private static final Set<String> NAMES_OF_63 =
      Set.of("Service", "Certificate", "Job", "Deployment");

  @ParameterizedTest
  @ValueSource(strings = {"release: " + LONGEST_RELEASE, "fullnameOverride: " + LONGEST_FULLNAME})
  void aLongReleaseRendersOnlyValidNamesAndNoTwoObjectsShareOne(String how) {
    for (String values : List.of(EVERYTHING_ON, WITH_CERT_MANAGER)) {
      RenderedChart chart = render(how, values);

      assertThat(chart.all()).isNotEmpty();
      for (HasMetadata object : chart.all()) {
        String name = object.getMetadata().getName();
        assertThat(name)
            .as("%s %s", object.getKind(), name)
            .hasSizeLessThanOrEqualTo(NAMES_OF_63.contains(object.getKind()) ? 63 : 253);
        assertThat(name)
            .as("%s %s", object.getKind(), name)
            .matches(object instanceof Service ? DNS_1035_LABEL : DNS_1123_SUBDOMAIN);
      }
      assertThat(chart.all().stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()))
          .doesNotHaveDuplicates();
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "release: " + LONGEST_RELEASE,
        "fullnameOverride: " + LONGEST_FULLNAME,
        "release: kvguard"
      })
  void theOperatorAndEveryReferenceNameTheObjectsRendered(String how) {
    RenderedChart chart = render(how, EVERYTHING_ON);
    Container operator = ChartDefaultsTest.operatorContainer(chart);
    Map<String, String> env = ChartDefaultsTest.env(operator);
    WebhookSettings settings = WebhookSettings.fromEnvironment(env);
    MutatingWebhookConfiguration configuration = chart.one(MutatingWebhookConfiguration.class);
    Service webhookService =
        chart.named(
            Service.class,
            configuration.getWebhooks().get(0).getClientConfig().getService().getName());

    assertThat(settings.configuration()).isEqualTo(configuration.getMetadata().getName());
    assertThat(env.get("KVGUARD_WEBHOOK_SERVICE"))
        .isEqualTo(webhookService.getMetadata().getName());
    assertThat(settings.dnsNames(RenderedChart.NAMESPACE))
        .contains(webhookService.getMetadata().getName() + "." + RenderedChart.NAMESPACE + ".svc");
    // The operator may read and write exactly the objects its environment names.
    assertThat(resourceNames(chart, "mutatingwebhookconfigurations"))
        .containsExactly(settings.configuration());
    // The policy confining that write names the same configuration.
    assertThat(
            chart.kind("ValidatingAdmissionPolicy").stream()
                .map(p -> RenderedChart.tree(p).at("/spec/variables/0/expression").asText())
                .filter(e -> e.contains("request.name")))
        .containsExactly(
            "request.operation == 'UPDATE' && request.name == '" + settings.configuration() + "'");
    assertThat(resourceNames(chart, "secrets"))
        .containsExactlyInAnyOrder(settings.certSecret(), env.get("KVGUARD_VERDICT_KEY_SECRET"));
    assertBindingsNameRenderedRoles(chart);
  }

  @ParameterizedTest
  @ValueSource(strings = {"release: " + LONGEST_RELEASE, "fullnameOverride: " + LONGEST_FULLNAME})
  void withCertManagerTheCertificateNamesTheServiceAndTheMountedSecret(String how) {
    RenderedChart chart = render(how, WITH_CERT_MANAGER);
    MutatingWebhookConfiguration configuration = chart.one(MutatingWebhookConfiguration.class);
    HasMetadata certificate = chart.kind("Certificate").get(0);
    JsonNode spec = RenderedChart.tree(certificate).get("spec");
    Deployment deployment = chart.one(Deployment.class);
    String service = configuration.getWebhooks().get(0).getClientConfig().getService().getName();

    assertThat(chart.named(Service.class, service)).isNotNull();
    assertThat(configuration.getMetadata().getAnnotations())
        .containsEntry(
            "cert-manager.io/inject-ca-from",
            RenderedChart.NAMESPACE + "/" + certificate.getMetadata().getName());
    assertThat(spec.get("dnsNames").get(0).asText())
        .isEqualTo(service + "." + RenderedChart.NAMESPACE + ".svc");
    assertThat(spec.at("/issuerRef/name").asText())
        .isEqualTo(chart.kind("Issuer").get(0).getMetadata().getName());
    assertThat(deployment.getSpec().getTemplate().getSpec().getVolumes())
        .filteredOn(v -> v.getSecret() != null)
        .singleElement()
        .satisfies(
            v ->
                assertThat(v.getSecret().getSecretName())
                    .isEqualTo(spec.get("secretName").asText()));
    assertThat(
            WebhookSettings.fromEnvironment(
                    ChartDefaultsTest.env(ChartDefaultsTest.operatorContainer(chart)))
                .configuration())
        .isEqualTo(configuration.getMetadata().getName());
    assertBindingsNameRenderedRoles(chart);
  }

  /** So {@link #LONGEST_RELEASE} is the worst case a release name can be. */
  @Test
  void helmRefusesAReleaseNameLongerThanFiftyThreeCharacters() {
    assertThat(LONGEST_RELEASE).hasSize(53);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RenderedChart.render(LONGEST_RELEASE + "c", ""))
        .hasMessageContaining("53");
  }

  /**
   * Names that may be 253 characters long are never shortened, so an upgrade keeps what a long
   * release already has: a renamed verdict-key Secret would make every signed verdict record count
   * as absent, a renamed webhook Secret would mean a new CA.
   */
  @Test
  void aLongReleaseKeepsItsLongNamesWhole() {
    RenderedChart chart = render("fullnameOverride: " + LONGEST_FULLNAME, EVERYTHING_ON);
    String f = LONGEST_FULLNAME;

    assertThat(names(chart))
        .contains(
            "MutatingWebhookConfiguration/" + f + "-readiness-gate",
            "ConfigMap/" + f + "-dashboard",
            "Role/" + f + "-verdict-key",
            "Role/" + f + "-webhook-tls",
            "Role/" + f + "-leader-election",
            "ClusterRole/" + f + "-webhook-ca",
            "ValidatingAdmissionPolicy/" + f + "-webhook-ca-writes",
            "ValidatingAdmissionPolicy/" + f + "-gate-writes");
    Map<String, String> env = ChartDefaultsTest.env(ChartDefaultsTest.operatorContainer(chart));
    assertThat(env)
        .containsEntry("KVGUARD_VERDICT_KEY_SECRET", f + "-verdict-key")
        .containsEntry("KVGUARD_WEBHOOK_CERT_SECRET", f + "-webhook-tls")
        .containsEntry("KVGUARD_WEBHOOK_CONFIGURATION", f + "-readiness-gate");
    assertThat(env.get("KVGUARD_WEBHOOK_SERVICE"))
        .hasSizeLessThanOrEqualTo(63)
        .endsWith("-webhook");
  }

  /** Dashboards, docs and existing installs use these: a default release keeps them. */
  @Test
  void aDefaultReleaseKeepsItsPublicNames() {
    RenderedChart chart = RenderedChart.renderWithHooks(EVERYTHING_ON);
    RenderedChart certManager = RenderedChart.render(WITH_CERT_MANAGER);

    assertThat(names(chart))
        .contains(
            "Deployment/kvguard",
            "Service/kvguard-metrics",
            "Service/kvguard-webhook",
            "MutatingWebhookConfiguration/kvguard-readiness-gate",
            "ConfigMap/kvguard-dashboard",
            "Role/kvguard-verdict-key",
            "Role/kvguard-webhook-tls",
            "Role/kvguard-leader-election",
            "ClusterRole/kvguard-webhook-ca",
            "ClusterRole/kvguard-crd-upgrade",
            "Job/kvguard-crd-upgrade",
            "ValidatingAdmissionPolicy/kvguard-pod-writes",
            "ValidatingAdmissionPolicy/kvguard-webhook-ca-writes",
            "ValidatingAdmissionPolicy/kvguard-gate-writes");
    Map<String, String> env = ChartDefaultsTest.env(ChartDefaultsTest.operatorContainer(chart));
    assertThat(env)
        .containsEntry("KVGUARD_VERDICT_KEY_SECRET", "kvguard-verdict-key")
        .containsEntry("KVGUARD_WEBHOOK_CERT_SECRET", "kvguard-webhook-tls")
        .containsEntry("KVGUARD_WEBHOOK_CONFIGURATION", "kvguard-readiness-gate")
        .containsEntry("KVGUARD_WEBHOOK_SERVICE", "kvguard-webhook");
    assertThat(names(certManager))
        .contains("Certificate/kvguard-webhook", "Issuer/kvguard-webhook-selfsigned");
  }

  private static RenderedChart render(String how, String values) {
    if (how.startsWith("release: ")) {
      return RenderedChart.renderWithHooks(how.substring("release: ".length()), values);
    }
    return RenderedChart.renderWithHooks(values + how + "\n");
  }

  private static Stream<String> names(RenderedChart chart) {
    return chart.all().stream().map(o -> o.getKind() + "/" + o.getMetadata().getName());
  }

  /** resourceNames of every rule, Role or ClusterRole, on the given resource. */
  private static List<String> resourceNames(RenderedChart chart, String resource) {
    return Stream.concat(
            chart.all(Role.class).stream().flatMap(r -> r.getRules().stream()),
            chart.all(ClusterRole.class).stream().flatMap(r -> r.getRules().stream()))
        .filter(rule -> rule.getResources().contains(resource))
        .map(PolicyRule::getResourceNames)
        .filter(names -> names != null)
        .flatMap(List::stream)
        .distinct()
        .toList();
  }

  private static void assertBindingsNameRenderedRoles(RenderedChart chart) {
    List<String> roles =
        chart.all(Role.class).stream().map(r -> r.getMetadata().getName()).toList();
    List<String> clusterRoles =
        chart.all(ClusterRole.class).stream().map(r -> r.getMetadata().getName()).toList();
    assertThat(chart.all(RoleBinding.class))
        .isNotEmpty()
        .allSatisfy(
            b ->
                assertThat(b.getRoleRef().getKind().equals("Role") ? roles : clusterRoles)
                    .as("RoleBinding %s", b.getMetadata().getName())
                    .contains(b.getRoleRef().getName()));
    assertThat(chart.all(ClusterRoleBinding.class))
        .isNotEmpty()
        .allSatisfy(
            b ->
                assertThat(clusterRoles)
                    .as("ClusterRoleBinding %s", b.getMetadata().getName())
                    .contains(b.getRoleRef().getName()));
  }
}

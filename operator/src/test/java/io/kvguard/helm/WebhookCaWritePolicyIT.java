package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.webhook.SelfManagedCertificates;
import io.kvguard.webhook.WebhookSettings;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook-ca-writes policy admits exactly what the operator sends: the chart's own
 * MutatingWebhookConfiguration, written by the operator's own certificate code through an API
 * server that applies its JSON patch, before and after, evaluated as the API server would (the
 * embedded server enforces no admission policy itself).
 */
class WebhookCaWritePolicyIT {
  private static final String KVGUARD =
      "system:serviceaccount:" + RenderedChart.NAMESPACE + ":kvguard";
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  @TempDir Path certificates;

  @AfterEach
  void close() {
    client.close();
    api.close();
  }

  @Test
  void theOperatorsCaBundleWritesPassThePolicy() {
    RenderedChart chart = RenderedChart.render("");
    EvaluatedPolicy policy =
        new EvaluatedPolicy(
            RenderedChart.tree(
                chart.kindNamed("ValidatingAdmissionPolicy", "kvguard-webhook-ca-writes")));
    Map<String, String> env = ChartDefaultsTest.env(ChartDefaultsTest.operatorContainer(chart));
    WebhookSettings chartSettings = WebhookSettings.fromEnvironment(env);
    WebhookSettings settings =
        new WebhookSettings(
            true,
            chartSettings.port(),
            certificates,
            chartSettings.certSecret(),
            chartSettings.configuration(),
            chartSettings.service());
    client.resource(chart.one(MutatingWebhookConfiguration.class)).create();

    // First start: the configuration Helm installed has no caBundle.
    JsonNode installed = configuration(settings);
    new SelfManagedCertificates(client, RenderedChart.NAMESPACE, settings, Clock.systemUTC())
        .round();
    JsonNode trusted = configuration(settings);
    assertThat(trusted.at("/webhooks/0/clientConfig/caBundle").asText()).isNotEmpty();
    assertThat(policy.refusals(EvaluatedPolicy.request("UPDATE", "", KVGUARD, trusted, installed)))
        .isEmpty();

    // A `helm upgrade` or a hand edit left a stale bundle: the operator writes its own back.
    client
        .admissionRegistration()
        .v1()
        .mutatingWebhookConfigurations()
        .withName(settings.configuration())
        .edit(
            c -> {
              c.getWebhooks().get(0).getClientConfig().setCaBundle("c3RhbGU=");
              return c;
            });
    JsonNode stale = configuration(settings);
    new SelfManagedCertificates(client, RenderedChart.NAMESPACE, settings, Clock.systemUTC())
        .round();
    JsonNode restored = configuration(settings);
    assertThat(restored.at("/webhooks/0/clientConfig/caBundle").asText())
        .isEqualTo(trusted.at("/webhooks/0/clientConfig/caBundle").asText());
    assertThat(policy.refusals(EvaluatedPolicy.request("UPDATE", "", KVGUARD, restored, stale)))
        .isEmpty();
  }

  private JsonNode configuration(WebhookSettings settings) {
    return RenderedChart.tree(
        client
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName(settings.configuration())
            .get());
  }
}

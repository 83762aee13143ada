package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.kvguard.testkit.EmbeddedApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator's own webhook certificates against an API server: Secret, files, caBundle, renewal,
 * two replicas.
 */
class SelfManagedCertificatesIT {
  private static final String NS = "kvguard-system";
  private final EmbeddedApiServer api = new EmbeddedApiServer();
  private final NamespacedKubernetesClient client = api.client();
  @TempDir Path firstReplica;
  @TempDir Path secondReplica;

  @BeforeEach
  void createTheConfiguration() {
    client
        .resource(
            new MutatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName("kvguard-readiness-gate")
                .endMetadata()
                .addNewWebhook()
                .withName("readiness-gate.kvguard.io")
                .withNewClientConfig()
                .withNewService()
                .withName("kvguard-webhook")
                .withNamespace(NS)
                .withPath(WebhookServer.PATH)
                .endService()
                .endClientConfig()
                .withAdmissionReviewVersions("v1")
                .withSideEffects("None")
                .endWebhook()
                .build())
        .create();
  }

  @AfterEach
  void close() {
    client.close();
    api.close();
  }

  @Test
  void firstStartIssuesOnePairThatEveryReplicaServesAndTheApiServerTrusts() throws Exception {
    new SelfManagedCertificates(client, NS, settings(firstReplica), Clock.systemUTC()).round();
    api.clearRequests();
    new SelfManagedCertificates(client, NS, settings(secondReplica), Clock.systemUTC()).round();

    assertThat(Files.readString(secondReplica.resolve("tls.crt")))
        .isEqualTo(Files.readString(firstReplica.resolve("tls.crt")));
    assertThat(api.requests())
        .as("the second replica only reads")
        .allMatch(r -> r.method().equals("GET"));
    X509Certificate served =
        ServingCertificate.certificates(Files.readAllBytes(firstReplica.resolve("tls.crt")))[0];
    served.verify(caBundle()[0].getPublicKey());
    assertThat(served.getSubjectAlternativeNames())
        .anySatisfy(n -> assertThat(n.get(1)).isEqualTo("kvguard-webhook.kvguard-system.svc"));
    ServingCertificate loaded = new ServingCertificate(firstReplica);
    assertThat(loaded.refresh()).as("the files make a usable pair").isTrue();
  }

  @Test
  void aDueServingCertificateIsRenewedByTheSameCaAndReachesTheFiles() throws Exception {
    new SelfManagedCertificates(client, NS, settings(firstReplica), Clock.systemUTC()).round();
    String before = Files.readString(firstReplica.resolve("tls.crt"));
    X509Certificate[] bundleBefore = caBundle();

    new SelfManagedCertificates(
            client,
            NS,
            settings(firstReplica),
            Clock.offset(Clock.systemUTC(), Duration.ofDays(300)))
        .round();

    assertThat(Files.readString(firstReplica.resolve("tls.crt")))
        .isNotEqualTo(before)
        .isEqualTo(secretValue("tls.crt"));
    assertThat(caBundle()).containsExactly(bundleBefore);
  }

  @Test
  void aCaBundleSomeoneResetIsWrittenAgain() throws Exception {
    new SelfManagedCertificates(client, NS, settings(firstReplica), Clock.systemUTC()).round();
    // What `helm upgrade` of a chart that rendered an empty caBundle, or a hand edit, would leave.
    client
        .admissionRegistration()
        .v1()
        .mutatingWebhookConfigurations()
        .withName("kvguard-readiness-gate")
        .edit(
            c -> {
              c.getWebhooks().get(0).getClientConfig().setCaBundle(null);
              return c;
            });

    new SelfManagedCertificates(client, NS, settings(secondReplica), Clock.systemUTC()).round();

    assertThat(caBundle()).isNotEmpty();
    assertThat(
            new String(
                Base64.getDecoder()
                    .decode(configuration().getWebhooks().get(0).getClientConfig().getCaBundle()),
                StandardCharsets.US_ASCII))
        .isEqualTo(secretValue("ca.crt"));
  }

  private WebhookSettings settings(Path dir) {
    return new WebhookSettings(
        true, 0, dir, "kvguard-webhook-tls", "kvguard-readiness-gate", "kvguard-webhook");
  }

  private MutatingWebhookConfiguration configuration() {
    return client
        .admissionRegistration()
        .v1()
        .mutatingWebhookConfigurations()
        .withName("kvguard-readiness-gate")
        .get();
  }

  private X509Certificate[] caBundle() throws Exception {
    String bundle = configuration().getWebhooks().get(0).getClientConfig().getCaBundle();
    return ServingCertificate.certificates(Base64.getDecoder().decode(bundle));
  }

  private String secretValue(String key) {
    Secret secret = client.secrets().inNamespace(NS).withName("kvguard-webhook-tls").get();
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    return new String(
        Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.US_ASCII);
  }
}

package io.kvguard.webhook;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where cert-manager is not used: the operator issues the webhook's CA and serving certificate
 * itself, keeps them in one Secret of its namespace (so every replica serves the same pair, and a
 * restart or a {@code helm upgrade} changes nothing), writes the pair into the certificate
 * directory the server reads, renews it before it expires ({@link CertificatePlan}) and keeps the
 * {@code caBundle} of its MutatingWebhookConfiguration equal to the Secret's {@code ca.crt}. Every
 * replica does this once at start and then every minute; two replicas renewing at once conflict on
 * the Secret's resourceVersion and the loser reads the winner's pair in its next round. Never on
 * the admission path.
 */
public final class SelfManagedCertificates implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SelfManagedCertificates.class);
  static final long PERIOD_SECONDS = 60;

  private final KubernetesClient client;
  private final String namespace;
  private final WebhookSettings settings;
  private final Clock clock;
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "kvguard-webhook-certificates");
            thread.setDaemon(true);
            return thread;
          });

  public SelfManagedCertificates(
      KubernetesClient client, String namespace, WebhookSettings settings, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.settings = settings;
    this.clock = clock;
  }

  /**
   * The first round at once on the timer's thread, then one a minute. Not on the caller's thread:
   * issuing a key pair and its Secret and caBundle writes would hold up the operator's start (its
   * informers, lease and first probes), which needs none of it. The server reads the pair within a
   * second of it being on disk and the replica stays unready until then (it is served only once it
   * holds one), so no admission is answered earlier than before.
   */
  public void start() {
    timer.scheduleWithFixedDelay(this::round, 0, PERIOD_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Renews what is due, writes the files, patches the caBundle; never throws (the next round tries
   * again).
   */
  public void round() {
    try {
      Map<String, String> data = secretData();
      if (data == null) {
        return;
      }
      writeFiles(data);
      patchCaBundle(data.get(CertificatePlan.CA_CRT));
    } catch (RuntimeException e) {
      LOG.warn(
          "webhook certificates: round failed, next in {} s error={}",
          PERIOD_SECONDS,
          e.toString());
    }
  }

  /**
   * The Secret's data after renewing what is due; null when another replica's write won (next round
   * reads it).
   */
  private Map<String, String> secretData() {
    Secret secret = client.secrets().inNamespace(namespace).withName(settings.certSecret()).get();
    Map<String, String> current = decode(secret);
    var next = CertificatePlan.next(current, settings.dnsNames(namespace), clock.instant());
    if (next.isEmpty()) {
      return current;
    }
    Map<String, String> encoded = new LinkedHashMap<>();
    next.get()
        .forEach(
            (key, value) ->
                encoded.put(
                    key,
                    Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.US_ASCII))));
    try {
      if (secret == null) {
        client
            .secrets()
            .inNamespace(namespace)
            .resource(
                new SecretBuilder()
                    .withNewMetadata()
                    .withName(settings.certSecret())
                    .withNamespace(namespace)
                    .addToLabels("app.kubernetes.io/managed-by", "kvguard")
                    .endMetadata()
                    .withType("kubernetes.io/tls")
                    .withData(encoded)
                    .build())
            .create();
        LOG.info(
            "webhook certificates: issued a CA and a serving certificate for {} in Secret {}/{}",
            settings.dnsNames(namespace),
            namespace,
            settings.certSecret());
      } else {
        Secret updated = new SecretBuilder(secret).withData(encoded).build();
        client.secrets().inNamespace(namespace).resource(updated).update();
        LOG.info("webhook certificates: renewed in Secret {}/{}", namespace, settings.certSecret());
      }
      return next.get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        LOG.info(
            "webhook certificates: another replica wrote Secret {}/{} first; reading it next round",
            namespace,
            settings.certSecret());
        return null;
      }
      throw e;
    }
  }

  private static Map<String, String> decode(Secret secret) {
    Map<String, String> data = new LinkedHashMap<>();
    if (secret != null && secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (key, value) ->
                  data.put(
                      key,
                      new String(Base64.getDecoder().decode(value), StandardCharsets.US_ASCII)));
    }
    return data;
  }

  /**
   * Replaces each file whole (a reader sees the old or the new one), the key first; unchanged files
   * stay.
   */
  private void writeFiles(Map<String, String> data) {
    try {
      Files.createDirectories(settings.certDir());
      write(ServingCertificate.KEY_FILE, data.get(CertificatePlan.TLS_KEY));
      write(ServingCertificate.CERT_FILE, data.get(CertificatePlan.TLS_CRT));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private void write(String name, String content) throws IOException {
    Path target = settings.certDir().resolve(name);
    if (Files.exists(target)
        && Files.readString(target, StandardCharsets.US_ASCII).equals(content)) {
      return;
    }
    Path temporary = Files.createTempFile(settings.certDir(), "." + name, ".tmp");
    Files.writeString(temporary, content, StandardCharsets.US_ASCII);
    Files.move(
        temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Makes every webhook of the configuration trust the Secret's CAs; writes only what differs. */
  private void patchCaBundle(String caPem) {
    MutatingWebhookConfiguration configuration =
        client
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName(settings.configuration())
            .get();
    if (configuration == null) {
      LOG.warn(
          "webhook certificates: MutatingWebhookConfiguration {} not found; its caBundle is set once it exists",
          settings.configuration());
      return;
    }
    String bundle = Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.US_ASCII));
    List<MutatingWebhook> webhooks =
        configuration.getWebhooks() == null ? List.of() : configuration.getWebhooks();
    StringBuilder patch = new StringBuilder("[");
    for (int i = 0; i < webhooks.size(); i++) {
      var clientConfig = webhooks.get(i).getClientConfig();
      if (clientConfig != null && !bundle.equals(clientConfig.getCaBundle())) {
        patch
            .append(patch.length() > 1 ? "," : "")
            .append("{\"op\":\"add\",\"path\":\"/webhooks/")
            .append(i)
            .append("/clientConfig/caBundle\",\"value\":\"")
            .append(bundle)
            .append("\"}");
      }
    }
    if (patch.length() > 1) {
      client
          .admissionRegistration()
          .v1()
          .mutatingWebhookConfigurations()
          .withName(settings.configuration())
          .patch(PatchContext.of(PatchType.JSON), patch.append("]").toString());
      LOG.info(
          "webhook certificates: caBundle of MutatingWebhookConfiguration {} set",
          settings.configuration());
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}

package io.kvguard.webhook;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The webhook's settings, read once from the environment (public API: the Helm chart sets these).
 *
 * @param enabled serve the webhook ({@code KVGUARD_WEBHOOK_ENABLED}; the chart's default is on)
 * @param port its HTTPS port ({@code KVGUARD_WEBHOOK_PORT}, 9443)
 * @param certDir where {@code tls.crt} and {@code tls.key} are read ({@code
 *     KVGUARD_WEBHOOK_CERT_DIR})
 * @param certSecret the Secret (operator's namespace) in which the operator keeps the CA and key
 *     pair it issues itself ({@code KVGUARD_WEBHOOK_CERT_SECRET}); empty: someone else
 *     (cert-manager) puts the pair in certDir
 * @param configuration the MutatingWebhookConfiguration whose caBundle the operator keeps current
 *     when it issues the certificates ({@code KVGUARD_WEBHOOK_CONFIGURATION})
 * @param service the webhook Service, whose DNS names the certificate it issues carries ({@code
 *     KVGUARD_WEBHOOK_SERVICE})
 */
public record WebhookSettings(
    boolean enabled,
    int port,
    Path certDir,
    String certSecret,
    String configuration,
    String service) {
  public static final int DEFAULT_PORT = 9443;
  public static final String DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";

  public static WebhookSettings disabled() {
    return new WebhookSettings(false, DEFAULT_PORT, Path.of(DEFAULT_CERT_DIR), "", "", "");
  }

  public static WebhookSettings fromEnvironment(Map<String, String> env) {
    boolean enabled =
        Boolean.parseBoolean(env.getOrDefault("KVGUARD_WEBHOOK_ENABLED", "false").strip());
    String rawPort = env.getOrDefault("KVGUARD_WEBHOOK_PORT", "").strip();
    int port;
    try {
      port = rawPort.isEmpty() ? DEFAULT_PORT : Integer.parseInt(rawPort);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "KVGUARD_WEBHOOK_PORT must be a whole number, was '" + rawPort + "'");
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(
          "KVGUARD_WEBHOOK_PORT must be between 0 and 65535, was " + port);
    }
    String dir = env.getOrDefault("KVGUARD_WEBHOOK_CERT_DIR", "").strip();
    WebhookSettings settings =
        new WebhookSettings(
            enabled,
            port,
            Path.of(dir.isEmpty() ? DEFAULT_CERT_DIR : dir),
            env.getOrDefault("KVGUARD_WEBHOOK_CERT_SECRET", "").strip(),
            env.getOrDefault("KVGUARD_WEBHOOK_CONFIGURATION", "").strip(),
            env.getOrDefault("KVGUARD_WEBHOOK_SERVICE", "").strip());
    if (enabled
        && settings.selfManaged()
        && (settings.configuration.isEmpty() || settings.service.isEmpty())) {
      throw new IllegalArgumentException(
          "KVGUARD_WEBHOOK_CERT_SECRET needs KVGUARD_WEBHOOK_CONFIGURATION and "
              + "KVGUARD_WEBHOOK_SERVICE: the certificate names the Service, and its CA goes into that configuration");
    }
    return settings;
  }

  /** True when the operator issues and rotates the certificates itself. */
  public boolean selfManaged() {
    return !certSecret.isEmpty();
  }

  /** The names the API server calls the Service by, which the serving certificate must carry. */
  public List<String> dnsNames(String namespace) {
    return List.of(
        service + "." + namespace + ".svc", service + "." + namespace + ".svc.cluster.local");
  }
}

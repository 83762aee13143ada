package io.kvguard.webhook;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kvguard.customresource.ModelDeployment;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.function.Function;

/**
 * The webhook as the operator runs it: its certificates (when it issues them itself) and its
 * server.
 */
public final class Webhook implements AutoCloseable {
  private final SelfManagedCertificates certificates;
  private final WebhookServer server;

  private Webhook(SelfManagedCertificates certificates, WebhookServer server) {
    this.certificates = certificates;
    this.server = server;
  }

  /**
   * @param policiesOfNamespace the namespace's ModelDeployments from the informer cache (never the
   *     API server)
   */
  public static Webhook start(
      KubernetesClient client,
      String ownNamespace,
      WebhookSettings settings,
      Function<String, List<ModelDeployment>> policiesOfNamespace,
      MeterRegistry registry,
      Clock clock)
      throws IOException {
    SelfManagedCertificates certificates = null;
    if (settings.selfManaged()) {
      certificates = new SelfManagedCertificates(client, ownNamespace, settings, clock);
      certificates.start();
    }
    WebhookServer server =
        new WebhookServer(
            settings.port(),
            new ServingCertificate(settings.certDir()),
            new AdmissionHandler(policiesOfNamespace, registry));
    server.start();
    return new Webhook(certificates, server);
  }

  /** True once the server has a key pair to serve with (until then the replica is not ready). */
  public boolean serving() {
    return server.serving();
  }

  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.close();
    if (certificates != null) {
      certificates.close();
    }
  }
}

package io.kvguard;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kvguard.webhook.Webhook;
import io.kvguard.webhook.WebhookSettings;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar kvguard-operator.jar} runs the operator against the current kubeconfig or
 * in-cluster config. Subcommand: {@code check} (preflight one engine); the demo ships in its own
 * jar (operator/demo).
 */
public final class OperatorMain {
  private static final Logger LOG = LoggerFactory.getLogger(OperatorMain.class);

  private OperatorMain() {}

  public static void main(String[] args) {
    try {
      if (args.length > 0 && !args[0].startsWith("-")) {
        System.exit(Subcommands.run(args));
      }
      runOperator(KvguardConfig.fromEnvironment(System.getenv()));
    } catch (IllegalArgumentException e) {
      System.err.println("kvguard: " + e.getMessage());
      System.exit(2);
    } catch (Exception e) {
      LOG.error("kvguard failed to start", e);
      System.exit(1);
    }
  }

  static void runOperator(KvguardConfig config) throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Metrics.globalRegistry.add(registry);
    KubernetesClient client = new KubernetesClientBuilder().build();
    Serving serving =
        serve(client, config, WebhookSettings.fromEnvironment(System.getenv()), registry, true);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  serving.close();
                  client.close();
                },
                "kvguard-shutdown"));
  }

  /** The operator, its two HTTP servers and the admission webhook (null when disabled), running. */
  public record Serving(
      KvguardOperator operator, MetricsServer metrics, HealthServer health, Webhook webhook)
      implements AutoCloseable {
    @Override
    public void close() {
      if (webhook != null) {
        webhook.close();
      }
      operator.close();
      health.close();
      metrics.close();
    }
  }

  /**
   * Starts what production runs: the operator, /metrics and the kubelet's /healthz and /readyz (the
   * benchmark's operator JVM starts it the same way).
   */
  public static Serving serve(
      KubernetesClient client,
      KvguardConfig config,
      PrometheusMeterRegistry registry,
      boolean exitOnStopLeading)
      throws java.io.IOException {
    return serve(client, config, WebhookSettings.disabled(), registry, exitOnStopLeading);
  }

  /**
   * As above, with the readiness-gate webhook when {@code webhookSettings} enable it. A replica is
   * ready only once its webhook has a key pair to serve with: the webhook Service sends admissions
   * to ready replicas only.
   */
  public static Serving serve(
      KubernetesClient client,
      KvguardConfig config,
      WebhookSettings webhookSettings,
      PrometheusMeterRegistry registry,
      boolean exitOnStopLeading)
      throws java.io.IOException {
    KvguardOperator operator =
        KvguardOperator.create(client, config, registry, Clock.systemUTC(), exitOnStopLeading);
    Webhook webhook = null;
    if (webhookSettings.enabled()) {
      String ownNamespace =
          config.leaseNamespace() != null ? config.leaseNamespace() : client.getNamespace();
      webhook =
          Webhook.start(
              client,
              ownNamespace,
              webhookSettings,
              operator::cachedPolicies,
              registry,
              Clock.systemUTC());
    }
    Webhook served = webhook;
    MetricsServer metrics =
        new MetricsServer(config.metricsBindAddress(), config.metricsPort(), registry::scrape);
    HealthServer health =
        new HealthServer(
            config.healthPort(),
            () -> operator.operator().getRuntimeInfo().isStarted(),
            () -> operator.healthy() && (served == null || served.serving()));
    metrics.start();
    health.start();
    operator.start();
    LOG.info(
        "kvguard started namespaces={} leaderElection={} metrics={}:{} healthPort={} webhookPort={}",
        config.namespaces().isEmpty() ? "all" : config.namespaces(),
        config.leaderElection(),
        config.metricsBindAddress(),
        config.metricsPort(),
        health.port(),
        webhook == null ? "off" : webhook.port());
    return new Serving(operator, metrics, health, webhook);
  }
}

package io.kvguard;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar kvguard-operator.jar} runs the operator against the current kubeconfig or in-cluster
 * config. Subcommands: {@code demo} (no cluster needed) and {@code check} (preflight one engine).
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
    KvguardOperator operator = KvguardOperator.create(client, config, registry, Clock.systemUTC(), true);
    HealthServer http = new HealthServer(config.metricsPort(), registry::scrape,
        () -> operator.operator().getRuntimeInfo().isStarted(), operator::healthy);
    http.start();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      operator.close();
      http.close();
      client.close();
    }, "kvguard-shutdown"));
    operator.start();
    LOG.info("kvguard started namespaces={} leaderElection={} metricsPort={}",
        config.namespaces().isEmpty() ? "all" : config.namespaces(), config.leaderElection(), config.metricsPort());
  }
}

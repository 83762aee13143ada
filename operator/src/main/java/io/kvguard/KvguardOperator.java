package io.kvguard;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.kvguard.gate.PodGate;
import io.kvguard.metrics.KvguardMetrics;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.reconciler.ModelDeploymentReconciler;
import io.kvguard.reconciler.ProbeCredentials;
import io.kvguard.reconciler.Signals;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The operator as production runs it; tests, the demo and the benchmark build it through here too, so they
 * exercise the same patch strategy (JSON patches, no server-side apply) and the same wiring.
 */
public final class KvguardOperator implements AutoCloseable {
  private final Operator operator;
  private final ModelDeploymentReconciler reconciler;

  private KvguardOperator(Operator operator, ModelDeploymentReconciler reconciler) {
    this.operator = operator;
    this.reconciler = reconciler;
  }

  /**
   * @param exitOnStopLeading production exits when it loses the lease (Kubernetes restarts it as a follower);
   *     tests pass false because JOSDK would call System.exit
   */
  public static KvguardOperator create(KubernetesClient client, KvguardConfig config, MeterRegistry registry,
      Clock clock, boolean exitOnStopLeading) {
    Operator operator = new Operator(o -> {
      o.withKubernetesClient(client)
          .withMetrics(MicrometerMetrics.withoutPerResourceMetrics(registry))
          .withUseSSAToPatchPrimaryResource(false)
          .withSSABasedCreateUpdateMatchForDependentResources(false)
          .withCloseClientOnStop(false);
      if (config.leaderElection()) {
        o.withLeaderElectionConfiguration(new LeaderElectionConfiguration(KvguardConfig.LEASE_NAME,
            config.leaseNamespace(), Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2),
            config.identity(), null, exitOnStopLeading));
      }
    });
    EngineHttp engineHttp = new EngineHttp(EngineHttp.newHttpClient(), config.probeMaxBodyBytes());
    EngineProbes probes = EngineProbes.standard(engineHttp);
    KvguardMetrics metrics = new KvguardMetrics(registry);
    ModelDeploymentReconciler reconciler = new ModelDeploymentReconciler(probes, new RejectionProbe(engineHttp),
        probeExecutor(config.probeConcurrency()),
        new PodGate(client, clock), new Signals(client, metrics, clock, config.identity()),
        new ProbeCredentials(client, clock), clock);
    operator.register(reconciler, c -> {
      if (!config.namespaces().isEmpty()) {
        c.settingNamespaces(config.namespaces());
      }
    });
    return new KvguardOperator(operator, reconciler);
  }

  private static ExecutorService probeExecutor(int threads) {
    AtomicInteger count = new AtomicInteger();
    return Executors.newFixedThreadPool(threads, runnable -> {
      Thread thread = new Thread(runnable, "kvguard-probe-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    });
  }

  public void start() {
    operator.start();
  }

  public Operator operator() {
    return operator;
  }

  /** Healthy when every informer and event source is running. */
  public boolean healthy() {
    return operator.getRuntimeInfo().isStarted() && operator.getRuntimeInfo().allEventSourcesAreHealthy();
  }

  @Override
  public void close() {
    operator.stop();
    reconciler.shutdown();
  }
}

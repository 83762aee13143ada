package io.kvguard.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A pod's gauges are removed by their pre-filter id (micrometer v1.17.1,
 * micrometer-core/src/main/java/io/micrometer/core/instrument/MeterRegistry.java,
 * removeByPreFilterId; Meter.Id equals = name + tags): they must leave the registry, and the
 * scrape, whatever filters the registry has (kvguard adds none; a deployment embedding it might).
 */
class GaugeRemovalTest {
  private static final Tags POD = KvguardMetrics.podTags("ns", "glm", "serve", "serve-0");
  private static final Tags OTHER = KvguardMetrics.podTags("ns", "glm", "serve", "serve-1");

  static Stream<Supplier<MeterRegistry>> registries() {
    return Stream.of(
        SimpleMeterRegistry::new,
        () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
        () -> {
          MeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
          r.config().commonTags("cluster", "c1");
          return r;
        },
        () -> {
          MeterRegistry r = new SimpleMeterRegistry();
          r.config().meterFilter(MeterFilter.renameTag("kvguard", "pod", "kubernetes_pod"));
          r.config().meterFilter(MeterFilter.ignoreTags("role"));
          return r;
        });
  }

  private static List<Meter> podMeters(MeterRegistry registry, String pod) {
    return registry.getMeters().stream()
        .filter(m -> m.getId().getName().startsWith("kvguard.pod."))
        .filter(
            m ->
                pod.equals(m.getId().getTag("pod"))
                    || pod.equals(m.getId().getTag("kubernetes_pod")))
        .toList();
  }

  @ParameterizedTest
  @MethodSource("registries")
  void aForgottenPodsGaugesLeaveTheRegistry(Supplier<MeterRegistry> made) {
    MeterRegistry registry = made.get();
    KvguardMetrics metrics = new KvguardMetrics(registry);
    metrics.pod(POD, 1_000, true);
    metrics.pod(OTHER, 2_000, false);
    assertThat(podMeters(registry, "serve-0")).hasSize(2);

    metrics.pod(POD, -1, true);
    assertThat(podMeters(registry, "serve-0"))
        .extracting(m -> m.getId().getName())
        .containsExactly("kvguard.pod.verified");

    metrics.forgetPod(POD);
    assertThat(podMeters(registry, "serve-0")).isEmpty();
    assertThat(podMeters(registry, "serve-1")).hasSize(2);
    if (registry instanceof PrometheusMeterRegistry prometheus) {
      assertThat(prometheus.scrape()).doesNotContain("serve-0").contains("serve-1");
    }

    // Registered again after removal: a new series, removable again.
    metrics.pod(POD, 3_000, true);
    assertThat(podMeters(registry, "serve-0")).hasSize(2);
    metrics.forgetModelDeployment("ns", "glm");
    assertThat(podMeters(registry, "serve-0")).isEmpty();
    assertThat(podMeters(registry, "serve-1")).isEmpty();
  }

  @ParameterizedTest
  @MethodSource("registries")
  void aFilterAddedAfterTheGaugeWasRegisteredDoesNotKeepIt(Supplier<MeterRegistry> made) {
    MeterRegistry registry = made.get();
    KvguardMetrics metrics = new KvguardMetrics(registry);
    metrics.pod(POD, 1_000, true);
    // Marks every pre-filter id stale (MeterRegistry.meterFilter, stalePreFilterIds).
    registry.config().meterFilter(MeterFilter.commonTags(Tags.of("late", "x")));
    metrics.forgetPod(POD);
    assertThat(podMeters(registry, "serve-0")).isEmpty();
  }
}

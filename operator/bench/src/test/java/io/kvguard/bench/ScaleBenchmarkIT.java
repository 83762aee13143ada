package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.bench.ApiWrites.Kind;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The scale benchmark at CI size (N = 100): the counts that do not depend on the machine's speed.
 * No timing is asserted; {@code docs/benchmarks.md} has the timed runs.
 */
class ScaleBenchmarkIT {
  private static final int PODS = 100;
  private static final int RESTARTS = 20;
  private static final int PERIOD_SECONDS = 5;
  private static BenchFigures figures;

  @BeforeAll
  static void run() throws Exception {
    ScaleBenchmark.quietLogs();
    BenchOptions options =
        new BenchOptions(
            PODS,
            PERIOD_SECONDS,
            2 * PERIOD_SECONDS,
            RESTARTS,
            10,
            BenchOptions.DEFAULT_PROBE_CONCURRENCY,
            BenchOptions.CHART_HEAP,
            0);
    try (ScaleBenchmark bench = new ScaleBenchmark(options)) {
      figures = bench.run(System.out);
    }
    figures.print(System.out);
  }

  @Test
  void everyGateFlipCostsExactlyOnePodStatusWrite() {
    // Each restart closes a verified pod's gate and the next probe opens it again: two flips.
    assertThat(figures.closeLatenciesMillis()).hasSize(RESTARTS);
    assertThat(figures.restartFlips()).isEqualTo(2L * RESTARTS);
    // Accepted writes: a write refused with 409/422 (the kubelet wrote the pod in between) is
    // re-read and retried.
    assertThat(figures.acceptedRestartWrites(Kind.POD_STATUS)).isEqualTo(figures.restartFlips());
    // Every flip moves the label too. (A label write can repeat when the pod cache lags:
    // docs/benchmarks.md.)
    assertThat(figures.acceptedRestartWrites(Kind.POD_LABEL))
        .isGreaterThanOrEqualTo(figures.restartFlips());
    assertThat(figures.restartWrites(Kind.OTHER)).isZero();
  }

  @Test
  void startUpWritesEachConditionOnceEachFinalizerOnceAndNothingIsRefused() {
    // Each pod's condition is written once, against the pod as the API server holds it, and no
    // write is refused. Nothing but the operator writes these pods at start-up, so a second write
    // is no retry a user needs: it is a pass planning again what an earlier pass wrote. Passes read
    // the operator's own writes before their watch events come back (OwnWrites); before that, a
    // pass that followed another within the watch's delay (a probe finishing triggers one) could
    // read the pod as listed, write its condition again and have that refused (seen once under
    // load average 18: 101 condition writes, one refused). (Refused label writes, one or two in
    // 100, came from late add events of a namespace's first LIST repeating passes on a stale pod;
    // PodCache tells that LIST apart by its pods since d7ee660.) A repeated or refused write names
    // the pod's requests in order.
    ScaleBenchmark.Rejected rejected = figures.startupRejected();
    assertThat(rejected.repeatedConditions())
        .as("pods whose condition was written more than once at start-up")
        .isEmpty();
    assertThat(rejected.histories()).as("refused pod writes at start-up").isEmpty();
    assertThat(rejected.crStatus()).isZero();
    assertThat(figures.startupWrites().get(Kind.POD_STATUS)).isEqualTo(PODS);
    // The only other writes at start-up are the finalizers, one per ModelDeployment, added before
    // its first pod write; the pass that added one writes its status against the version the
    // finalizer made, not a stale one.
    assertThat(figures.startupWrites().get(Kind.OTHER)).isEqualTo(PODS / 10);
    // And the verdict key, created once by the operator that finds none.
    assertThat(figures.startupWrites().get(Kind.SECRET)).isEqualTo(1L);
  }

  @Test
  void eachSubjectsStartIsToldApartFromItsWork() {
    // The "start + work" row: each subject's first probe was seen, before its last gate was set.
    assertThat(figures.firstProbes().floor()).isBetween(0L, figures.floorMillis());
    assertThat(figures.firstProbes().contractFloor()).isBetween(0L, figures.contractFloorMillis());
    assertThat(figures.firstProbes().operator()).isBetween(0L, figures.startupMillis());
  }

  @Test
  void nothingIsWrittenWhileNothingChanges() {
    // The recorder was live in the window: the leader renewed its lease there.
    assertThat(figures.steadyWrites().getOrDefault(Kind.LEASE, 0L)).isPositive();
    assertThat(figures.steadyWrites())
        .allSatisfy(
            (kind, count) -> {
              if (kind != Kind.LEASE) {
                assertThat(count).as(kind.label).isZero();
              }
            });
  }

  @Test
  void eachEngineIsProbedOncePerPeriodPlusOncePerContainerStart() {
    assertThat(figures.steadyProbeOverruns()).isZero();
    assertThat(figures.restartProbeOverruns()).isZero();
    // Re-probing does happen: over two periods every engine is asked about once per period on
    // average.
    assertThat(figures.steadyProbesPerPeriodMean()).isGreaterThanOrEqualTo(0.5);
  }
}

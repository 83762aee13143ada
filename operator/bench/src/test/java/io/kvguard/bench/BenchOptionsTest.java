package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The benchmark's command line: what a user types, and the errors a typo gets. */
class BenchOptionsTest {
  @Test
  void aFlagAnywhereAndValuedOptionsInAnyOrderAreRead() {
    BenchOptions options =
        BenchOptions.parse(
            new String[] {
              "--timeline", "--steady", "60", "--pods", "100", "--operator-heap", "512m"
            });
    assertThat(options.pods()).isEqualTo(100);
    assertThat(options.steadySeconds()).isEqualTo(60);
    assertThat(options.timeline()).isTrue();
    assertThat(options.timelineMillis()).isEqualTo(500);
    assertThat(options.operatorHeap()).isEqualTo("512m");
    assertThat(options.periodSeconds()).isEqualTo(10);
  }

  @Test
  void timelineMsSetsTheBucketAndTurnsTheTimelineOn() {
    BenchOptions options = BenchOptions.parse(new String[] {"--timeline-ms", "100"});
    assertThat(options.timeline()).isTrue();
    assertThat(options.timelineMillis()).isEqualTo(100);
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--timeline-ms", "-5"}))
        .hasMessageContaining("--timeline-ms must be positive");
  }

  @Test
  void theDefaultsAreTheIssuesRunWithTheChartsHeap() {
    BenchOptions options = BenchOptions.parse(new String[0]);
    assertThat(options.pods()).isEqualTo(1000);
    assertThat(options.steadySeconds()).isEqualTo(300);
    assertThat(options.restarts()).isEqualTo(200);
    assertThat(options.operatorHeap()).isEqualTo(BenchOptions.CHART_HEAP);
    assertThat(options.timeline()).isFalse();
  }

  @Test
  void typosAndBadValuesAreRefusedWithTheReason() {
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--podz", "100"}))
        .hasMessageContaining("unknown option --podz")
        .hasMessageContaining("--pods");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--steady"}))
        .hasMessageContaining("needs a value");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--operator-heap", "lots"}))
        .hasMessageContaining("-Xmx size");
    assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--pods", "15"}))
        .hasMessageContaining("multiple of 10");
  }

  @Test
  void theOperatorJvmRunsWithTheChartsJvmOptions() throws java.io.IOException {
    com.fasterxml.jackson.databind.JsonNode values =
        new com.fasterxml.jackson.dataformat.yaml.YAMLMapper()
            .readTree(io.kvguard.helm.RenderedChart.CHART.resolve("values.yaml").toFile());
    assertThat(BenchOptions.CHART_JVM_OPTIONS).isEqualTo(values.get("jvmOptions").asText());
  }
}

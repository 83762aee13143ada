package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ServiceMonitor and PrometheusRule render only where the cluster serves monitoring.coreos.com/v1
 * (the Prometheus Operator's CRDs). Asked for where it is missing, rendering stops and says why:
 * Helm's own "no matches for kind" came only half-way through an install. Without the API and not
 * asked for, the notes say what was left out.
 */
class MonitoringApiTest {
  @Test
  void withoutTheApiNothingIsRenderedAndTheNotesSaySo() {
    assertThat(RenderedChart.render("").kinds()).doesNotContain("ServiceMonitor", "PrometheusRule");
    assertThat(RenderedChart.notes(""))
        .contains(
            "No ServiceMonitor or PrometheusRule was rendered: this cluster serves no monitoring.coreos.com/v1",
            "Scrape port 8080 path /metrics with honor_labels: true");
  }

  @ParameterizedTest
  @ValueSource(strings = {"serviceMonitor", "prometheusRule"})
  void askedForWhereTheApiIsMissingRenderingStopsWithTheReason(String kind) {
    assertThatThrownBy(() -> RenderedChart.render("metrics: {" + kind + ": {enabled: true}}"))
        .hasMessageContaining(
            "metrics."
                + kind
                + ".enabled=true, but this cluster serves no monitoring.coreos.com/v1")
        .hasMessageContaining("install the Prometheus Operator's CRDs first");
  }

  @Test
  void whereTheApiIsServedBothRender() {
    RenderedChart chart =
        RenderedChart.render(
            RenderedChart.MONITORING_API
                + "metrics: {serviceMonitor: {enabled: true}, prometheusRule: {enabled: true}}");
    assertThat(chart.kind("ServiceMonitor")).hasSize(1);
    assertThat(chart.kind("PrometheusRule")).hasSize(1);
    assertThat(
            RenderedChart.notes(
                RenderedChart.MONITORING_API
                    + "metrics: {serviceMonitor: {enabled: true}, prometheusRule: {enabled: true}}"))
        .doesNotContain("ServiceMonitor", "PrometheusRule");
  }

  @Test
  void whereTheApiIsServedButTheAlertsAreOffTheNotesSaySo() {
    assertThat(
            RenderedChart.notes(
                RenderedChart.MONITORING_API + "metrics: {serviceMonitor: {enabled: true}}"))
        .contains(
            "The Prometheus Operator is here (monitoring.coreos.com/v1), but kvguard's PrometheusRule (its"
                + " alerts) is off");
    assertThat(RenderedChart.notes(RenderedChart.MONITORING_API))
        .contains("but kvguard's ServiceMonitor and PrometheusRule (its alerts) is off");
  }
}

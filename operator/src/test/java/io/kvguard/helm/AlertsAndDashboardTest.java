package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.observe.KvguardMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The alert rules and the dashboard parse as PromQL, and every metric and label they name is one
 * the operator really exports: the names are checked against a scrape of {@link KvguardMetrics}
 * after every kind of series was recorded, and against {@link KvguardMetrics#ALL}.
 */
class AlertsAndDashboardTest {
  private static Set<String> scrapedMetrics;
  private static Set<String> scrapedLabels;
  private static Map<String, String> alertExpressions;
  private static Map<String, List<String>> panelExpressions;
  private static JsonNode dashboard;

  @BeforeAll
  static void collect() throws Exception {
    scrapeTheOperatorsMetrics();
    alertExpressions = new LinkedHashMap<>();
    RenderedChart chart =
        RenderedChart.render(
            RenderedChart.MONITORING_API + "metrics: {prometheusRule: {enabled: true}}");
    for (JsonNode alert : ChartHaCombinationTest.alerts(chart.kind("PrometheusRule").get(0))) {
      alertExpressions.put(alert.get("alert").asText(), alert.get("expr").asText());
    }
    dashboard =
        new ObjectMapper()
            .readTree(Files.readString(RenderedChart.CHART.resolve("dashboards/kvguard.json")));
    panelExpressions = new LinkedHashMap<>();
    for (JsonNode panel : dashboard.get("panels")) {
      List<String> expressions = new ArrayList<>();
      panel.get("targets").forEach(t -> expressions.add(t.get("expr").asText()));
      panelExpressions.put(panel.get("title").asText(), expressions);
    }
  }

  /**
   * Records one series of every kvguard metric, as the operator does, and reads back what
   * Prometheus would scrape.
   */
  private static void scrapeTheOperatorsMetrics() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    KvguardMetrics metrics = new KvguardMetrics(registry);
    metrics.contextWindow("inference", "glm", 1_048_576);
    metrics.pod(
        KvguardMetrics.podTags("inference", "glm", "prefill", "glm-prefill-0"), 681_280, false);
    metrics.gateTransition(KvguardMetrics.roleTags("inference", "glm", "prefill"), false);
    metrics.probe(
        KvguardMetrics.roleTags("inference", "glm", "prefill"),
        "sglang",
        Duration.ofMillis(40),
        true);
    metrics.rejectionProbe(
        KvguardMetrics.roleTags("inference", "glm", "prefill"), "sglang", "answered");
    metrics.gateWriteFailure("inference", "glm");
    metrics.strandedPods("inference", 1);
    metrics.hungProbes("inference", 1);
    metrics.hungRejectionProbes("inference", 1);
    metrics.eventWrite("inference", "glm", "dropped");
    metrics.advisoryWarning("inference", "glm", "prefill", "sglang-pd-admission-abort", 2);
    metrics.labelOnlyPods(KvguardMetrics.roleTags("inference", "glm", "prefill"), 1);
    metrics.unreadableModelDeployments("inference", 1);
    metrics.unwatchedNamespace("retired", true);
    scrapedMetrics = new TreeSet<>();
    scrapedLabels = new TreeSet<>();
    Pattern sample = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? .*$");
    Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
    for (String line : registry.scrape().split("\n")) {
      Matcher m = sample.matcher(line);
      if (line.startsWith("#") || !m.matches() || !m.group(1).startsWith("kvguard_")) {
        continue;
      }
      scrapedMetrics.add(m.group(1));
      if (m.group(3) != null) {
        Matcher l = label.matcher(m.group(3));
        while (l.find()) {
          scrapedLabels.add(l.group(1));
        }
      }
    }
  }

  /**
   * Grafana's interval variables stand for a duration; label values such as $namespace sit inside
   * strings.
   */
  private static String withGrafanaVariables(String expression) {
    return expression
        .replace("$__rate_interval", "5m")
        .replace("$__interval", "1m")
        .replace("$__range", "1h");
  }

  private static String baseName(String metric) {
    for (String suffix : List.of("_count", "_sum", "_max", "_bucket")) {
      if (metric.startsWith(KvguardMetrics.PROBE_DURATION_SECONDS) && metric.endsWith(suffix)) {
        return metric.substring(0, metric.length() - suffix.length());
      }
    }
    return metric;
  }

  @Test
  void theScrapeHoldsEveryMetricTheOperatorDeclares() {
    assertThat(
            scrapedMetrics.stream()
                .map(AlertsAndDashboardTest::baseName)
                .collect(Collectors.toSet()))
        .containsExactlyInAnyOrderElementsOf(KvguardMetrics.ALL);
  }

  @Test
  void everyAlertExpressionParsesAndNamesOnlyExportedMetricsAndLabels() {
    assertThat(alertExpressions).hasSize(7);
    alertExpressions.forEach(
        (alert, expression) -> {
          PromQl.Names names = PromQl.parse(expression);
          assertThat(names.metrics())
              .as(alert)
              .isNotEmpty()
              .allSatisfy(
                  metric -> {
                    assertThat(scrapedMetrics).as("%s uses %s", alert, metric).contains(metric);
                    assertThat(KvguardMetrics.ALL).contains(baseName(metric));
                  });
          assertThat(scrapedLabels).as("labels of %s", alert).containsAll(names.labels());
        });
  }

  @Test
  void theAlertsWatchWhatTheirNamesPromise() {
    assertThat(PromQl.parse(alertExpressions.get("KvguardPodRefused")).metrics())
        .containsExactly(KvguardMetrics.POD_VERIFIED);
    assertThat(alertExpressions.get("KvguardPodRefused")).contains("== 0");
    assertThat(PromQl.parse(alertExpressions.get("KvguardModelNotReady")).metrics())
        .containsExactlyInAnyOrder(
            KvguardMetrics.POD_VERIFIED, KvguardMetrics.CONTEXT_WINDOW_TOKENS);
    assertThat(PromQl.parse(alertExpressions.get("KvguardProbesFailing")).metrics())
        .containsExactlyInAnyOrder(
            KvguardMetrics.PROBE_FAILURES_TOTAL, KvguardMetrics.PROBE_DURATION_SECONDS + "_count");
    assertThat(alertExpressions.get("KvguardProbesFailing")).contains("rate(").contains("> 0.25");
    assertThat(PromQl.parse(alertExpressions.get("KvguardMetricsAbsent")).metrics())
        .containsExactly(KvguardMetrics.BUILD_INFO);
    assertThat(PromQl.parse(alertExpressions.get("KvguardPodsStranded")).metrics())
        .containsExactly(KvguardMetrics.STRANDED_PODS);
  }

  /**
   * Issue 28 §2: the alert on pods a deleted policy left gated fires from the gauge of what exists,
   * per namespace, and stops when the namespace's series goes; no counter of a deleted policy is
   * left for it to read.
   */
  @Test
  void theStrandedPodsAlertFiresWhileANamespaceHasOneAndStopsWhenItsSeriesGoes() {
    ThresholdAlert alert = ThresholdAlert.parse(alertExpressions.get("KvguardPodsStranded"));
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    KvguardMetrics metrics = new KvguardMetrics(registry);
    metrics.strandedPods("inference", 2);
    metrics.strandedPods("batch", 0);
    assertThat(alert.firing(registry.scrape()))
        .isEqualTo(Map.of(Map.of("namespace", "inference"), 2.0));
    metrics.strandedPods("inference", 0);
    assertThat(alert.firing(registry.scrape())).isEmpty();
    assertThat(registry.scrape()).doesNotContain(KvguardMetrics.STRANDED_PODS + "{");
  }

  /**
   * A namespace kvguard may not read is a namespace it does not guard: the alert fires while the
   * gauge names it and stops when its series goes.
   */
  @Test
  void theUnwatchedNamespaceAlertFiresWhileANamespaceIsLeftOutAndStopsWhenItsSeriesGoes() {
    ThresholdAlert alert = ThresholdAlert.parse(alertExpressions.get("KvguardNamespaceUnwatched"));
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    KvguardMetrics metrics = new KvguardMetrics(registry);
    metrics.unwatchedNamespace("retired", true);
    metrics.unwatchedNamespace("inference", false);
    assertThat(alert.firing(registry.scrape()))
        .isEqualTo(Map.of(Map.of("namespace", "retired"), 1.0));
    metrics.unwatchedNamespace("retired", false);
    assertThat(alert.firing(registry.scrape())).isEmpty();
  }

  @Test
  void theDashboardIsGrafanaJsonWithUniquePanelsOnAPrometheusDataSource() {
    assertThat(dashboard.get("uid").asText()).isEqualTo("kvguard-overview");
    assertThat(dashboard.get("title").asText()).isNotBlank();
    List<Integer> ids =
        StreamSupport.stream(dashboard.get("panels").spliterator(), false)
            .map(p -> p.get("id").asInt())
            .toList();
    assertThat(ids).doesNotHaveDuplicates();
    assertThat(dashboard.get("templating").get("list"))
        .anySatisfy(
            v -> {
              assertThat(v.get("type").asText()).isEqualTo("datasource");
              assertThat(v.get("query").asText()).isEqualTo("prometheus");
            });
    for (JsonNode panel : dashboard.get("panels")) {
      assertThat(panel.get("datasource").get("uid").asText()).isEqualTo("${datasource}");
      assertThat(panel.get("gridPos").get("w").asInt()).isBetween(1, 24);
    }
    int queryVariables = 0;
    for (JsonNode variable : dashboard.get("templating").get("list")) {
      if (variable.get("type").asText().equals("query")) {
        queryVariables++;
        String query = variable.get("query").get("query").asText();
        Matcher m = Pattern.compile("^label_values\\((.*), *([a-z_]+)\\)$").matcher(query);
        assertThat(m.matches()).as(query).isTrue();
        assertThat(PromQl.parse(m.group(1)).metrics())
            .as(query)
            .isNotEmpty()
            .allSatisfy(metric -> assertThat(scrapedMetrics).contains(metric));
        assertThat(scrapedLabels).contains(m.group(2));
      }
    }
    // The namespace and ModelDeployment filters every panel uses.
    assertThat(queryVariables).isGreaterThanOrEqualTo(2);
  }

  @Test
  void everyDashboardQueryParsesAndNamesOnlyExportedMetricsAndLabels() {
    panelExpressions.forEach(
        (panel, expressions) -> {
          assertThat(expressions).as(panel).isNotEmpty();
          for (String expression : expressions) {
            PromQl.Names names = PromQl.parse(withGrafanaVariables(expression));
            assertThat(names.metrics())
                .as("%s: %s", panel, expression)
                .isNotEmpty()
                .allSatisfy(metric -> assertThat(scrapedMetrics).as(panel).contains(metric));
            assertThat(scrapedLabels).as("labels of %s", panel).containsAll(names.labels());
          }
        });
  }

  @Test
  void theDashboardShowsPoolVersusWindowVerifiedPodsTransitionsAndProbeLatency() {
    assertThat(metricsOf("KV pool vs context window"))
        .contains(KvguardMetrics.POD_KV_POOL_TOKENS, KvguardMetrics.CONTEXT_WINDOW_TOKENS);
    assertThat(panelExpressions.get("KV pool vs context window").get(0))
        .contains("by (namespace, modeldeployment, role)");
    assertThat(metricsOf("Verified / selected pods")).containsExactly(KvguardMetrics.POD_VERIFIED);
    assertThat(String.join(" ", panelExpressions.get("Verified / selected pods")))
        .contains("sum by")
        .contains("count by");
    assertThat(metricsOf("Stranded pods")).containsExactly(KvguardMetrics.STRANDED_PODS);
    assertThat(metricsOf("Hung probes"))
        .containsExactlyInAnyOrder(
            KvguardMetrics.PROBES_HUNG, KvguardMetrics.REJECTION_PROBES_HUNG);
    assertThat(metricsOf("Gate transitions"))
        .containsExactly(KvguardMetrics.GATE_TRANSITIONS_TOTAL);
    assertThat(metricsOf("Probe latency"))
        .contains(
            KvguardMetrics.PROBE_DURATION_SECONDS + "_sum",
            KvguardMetrics.PROBE_DURATION_SECONDS + "_count",
            KvguardMetrics.PROBE_DURATION_SECONDS + "_max");
    Set<String> everything =
        panelExpressions.values().stream()
            .flatMap(List::stream)
            .flatMap(e -> PromQl.parse(withGrafanaVariables(e)).metrics().stream())
            .map(AlertsAndDashboardTest::baseName)
            .collect(Collectors.toSet());
    assertThat(everything).containsExactlyInAnyOrderElementsOf(KvguardMetrics.ALL);
  }

  private static Set<String> metricsOf(String panel) {
    assertThat(panelExpressions).containsKey(panel);
    return panelExpressions.get(panel).stream()
        .flatMap(e -> PromQl.parse(withGrafanaVariables(e)).metrics().stream())
        .collect(Collectors.toCollection(TreeSet::new));
  }
}

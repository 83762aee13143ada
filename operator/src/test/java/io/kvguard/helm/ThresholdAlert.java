package io.kvguard.helm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An alert of the chart whose expression has the one shape kvguard's gauge alerts take, {@code
 * max|sum by (labels) (metric) > number}, evaluated at an instant against what Prometheus would
 * scrape. Any other shape is refused: an alert rewritten into another shape fails the test that
 * evaluates it instead of being misread. The expression is also checked by {@link PromQl}.
 */
public record ThresholdAlert(String aggregation, List<String> by, String metric, double above) {
  private static final Pattern SHAPE =
      Pattern.compile(
          "^(max|sum) by \\(([a-z_, ]+)\\) \\(([a-zA-Z_:][a-zA-Z0-9_:]*)\\) > ([0-9.]+)$");
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+).*$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");

  /** The chart's alert of this name, as rendered with the PrometheusRule on. */
  public static ThresholdAlert ofChart(String alert) {
    RenderedChart chart =
        RenderedChart.render(
            RenderedChart.MONITORING_API + "metrics: {prometheusRule: {enabled: true}}");
    for (JsonNode rule : ChartHaCombinationTest.alerts(chart.kind("PrometheusRule").get(0))) {
      if (rule.get("alert").asText().equals(alert)) {
        return parse(rule.get("expr").asText());
      }
    }
    throw new AssertionError("the chart has no alert " + alert);
  }

  public static ThresholdAlert parse(String expression) {
    PromQl.parse(expression);
    Matcher m = SHAPE.matcher(expression.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "not an alert of the shape agg by (...) (m) > n: " + expression);
    }
    return new ThresholdAlert(
        m.group(1), List.of(m.group(2).split(" *, *")), m.group(3), Double.parseDouble(m.group(4)));
  }

  /** The alerts that fire now, each by its labels, with the value it fires with. */
  public Map<Map<String, String>, Double> firing(String prometheusText) {
    Map<Map<String, String>, Double> groups = new LinkedHashMap<>();
    for (String line : prometheusText.split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (line.startsWith("#") || !m.matches() || !m.group(1).equals(metric)) {
        continue;
      }
      Map<String, String> labels = new TreeMap<>();
      if (m.group(3) != null) {
        Matcher l = LABEL.matcher(m.group(3));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      Map<String, String> group = new TreeMap<>();
      by.forEach(label -> group.put(label, labels.getOrDefault(label, "")));
      double value = Double.parseDouble(m.group(4));
      groups.merge(group, value, aggregation.equals("max") ? Math::max : Double::sum);
    }
    groups.values().removeIf(value -> !(value > above));
    return groups;
  }
}

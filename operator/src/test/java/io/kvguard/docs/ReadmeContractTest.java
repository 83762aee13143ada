package io.kvguard.docs;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.kvguard.gate.GateNames;
import io.kvguard.helm.RenderedChart;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §1: the names a new user copies from the README's first-hour flow are the ones the code,
 * the CRD and the chart use, so the flow works as written.
 */
class ReadmeContractTest {
  private static final Path README = Path.of("../README.md");

  private static String readme() throws IOException {
    return Files.readString(README);
  }

  @Test
  void theNamespaceLabelIsTheOneTheChartsWebhookSelects() throws IOException {
    Matcher label =
        Pattern.compile("kubectl label namespace \\S+ ([\\w./-]+)=(\\w+)").matcher(readme());
    assertThat(label.find()).as("the README labels the namespace").isTrue();
    var selector =
        RenderedChart.render("")
            .one(MutatingWebhookConfiguration.class)
            .getWebhooks()
            .get(0)
            .getNamespaceSelector();
    assertThat(selector.getMatchLabels()).containsEntry(label.group(1), label.group(2));
  }

  @Test
  void theReadinessGateAndRoutingLabelAreTheOnesKvguardWrites() throws IOException {
    assertThat(readme())
        .contains("- conditionType: " + GateNames.CONDITION_TYPE)
        .contains("`" + GateNames.VERIFIED_LABEL + ": \"true\"`");
  }

  @Test
  void kubectlGetShowsTheCrdsPrinterColumnsInOrder() throws IOException {
    JsonNode crd =
        new YAMLMapper()
            .readTree(
                Files.readString(
                    Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")));
    List<String> columns = new ArrayList<>(List.of("NAME"));
    crd.at("/spec/versions/0/additionalPrinterColumns")
        .forEach(c -> columns.add(c.path("name").asText().toUpperCase(Locale.ROOT)));
    Matcher header = Pattern.compile("(?m)^\\s*(NAME\\s+MODEL\\b.*)$").matcher(readme());
    assertThat(header.find()).as("the README shows kubectl get mdep").isTrue();
    assertThat(List.of(header.group(1).trim().split("\\s+"))).isEqualTo(columns);
  }

  @Test
  void everyChartValueTheReadmeSetsExists() throws IOException {
    JsonNode values =
        new YAMLMapper().readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
    Matcher set = Pattern.compile("--set ([\\w.]+)=").matcher(readme());
    int found = 0;
    while (set.find()) {
      found++;
      assertThat(values.at("/" + set.group(1).replace('.', '/')).isMissingNode())
          .as("chart value %s", set.group(1))
          .isFalse();
    }
    assertThat(found).isGreaterThanOrEqualTo(2);
  }

  @Test
  void everyAlertTheReadmeNamesIsInTheChartsRules() throws IOException {
    String rules = Files.readString(RenderedChart.CHART.resolve("templates/prometheusrule.yaml"));
    Matcher alert = Pattern.compile("`(Kvguard[A-Za-z]+)`").matcher(readme());
    while (alert.find()) {
      assertThat(rules).contains("- alert: " + alert.group(1));
    }
  }
}

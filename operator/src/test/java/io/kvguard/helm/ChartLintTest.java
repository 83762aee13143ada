package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

/**
 * `helm lint --strict`: Chart.yaml, templates and values pass Helm's own checks, warnings included.
 */
class ChartLintTest {
  @Test
  void theChartPassesStrictLint() {
    LintResult result = new Helm(RenderedChart.CHART).lint().strict().call();
    System.out.println("helm lint --strict: " + result.getMessages());
    assertThat(result.isFailed()).as(String.join("\n", result.getMessages())).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
  }
}

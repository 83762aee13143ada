package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The PromQL check must fail on the mistakes that would break an alert or a panel in Prometheus.
 */
class PromQlTest {

  @Test
  void readsMetricAndLabelNames() {
    PromQl.Names names =
        PromQl.parse(
            "sum by (namespace, role) (rate(kvguard_probe_failures_total{engine=\"sglang\"}[10m]))"
                + " / on (namespace) group_left() max by (namespace) (kvguard_context_window_tokens) > bool 0.25");
    assertThat(names.metrics())
        .containsExactlyInAnyOrder("kvguard_probe_failures_total", "kvguard_context_window_tokens");
    assertThat(names.labels()).containsExactlyInAnyOrder("namespace", "role", "engine");
  }

  @Test
  void acceptsWhatPrometheusAcceptsAndReadsItsNames() {
    assertThat(PromQl.parse("absent(kvguard_build_info)"))
        .isEqualTo(new PromQl.Names(Set.of("kvguard_build_info"), Set.of()));
    assertThat(
            PromQl.parse(
                "max(kvguard_pod_verified) without (pod) == 0 or on (namespace) vector(1)"))
        .isEqualTo(new PromQl.Names(Set.of("kvguard_pod_verified"), Set.of("pod", "namespace")));
    assertThat(
            PromQl.parse(
                "-kvguard_pod_verified offset 5m unless kvguard_pod_verified{pod!~\"a|b\",}"))
        .isEqualTo(new PromQl.Names(Set.of("kvguard_pod_verified"), Set.of("pod")));
    assertThat(PromQl.parse("topk(3, sum_over_time(kvguard_pod_verified[1h:5m]))"))
        .isEqualTo(new PromQl.Names(Set.of("kvguard_pod_verified"), Set.of()));
    // Numbers and operators only: an expression that names nothing.
    assertThat(PromQl.parse("2 ^ 3 ^ 2 * 1e3")).isEqualTo(new PromQl.Names(Set.of(), Set.of()));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "rate(kvguard_probe_failures_total)", // rate needs a range
        "sum(kvguard_pod_verified[5m])", // aggregation of a range
        "sum by (namespace (kvguard_pod_verified)", // unbalanced
        "kvguard_pod_verified{pod=unquoted}", // matcher value must be a string
        "kvguard_pod_verified{pod~\"x\"}", // no such matcher operator
        "rates(kvguard_probe_failures_total[5m])", // unknown function
        "kvguard_pod_verified[5m]", // a range cannot be the result
        "kvguard_pod_verified and 1", // set operators need vectors
        "kvguard_pod_verified + bool kvguard_pod_verified", // bool only after comparisons
        "kvguard_pod_verified == 0 )", // trailing junk
        "kvguard_pod_verified[five]", // not a duration
        "sum(kvguard_pod_verified) by (pod) by (role)", // two groupings
        "{}", // an empty selector
        "max by (namespace, modeldeployment) kvguard_pod_verified", // aggregation without
        // parentheses
      })
  void rejects(String expression) {
    assertThatThrownBy(() -> PromQl.parse(expression)).isInstanceOf(IllegalArgumentException.class);
  }
}

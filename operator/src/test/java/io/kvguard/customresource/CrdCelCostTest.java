package io.kvguard.customresource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real API server refuses a CRD whose x-kubernetes-validations rules could cost too much to
 * evaluate (issue 17: `helm install` failed on every cluster). The mock API server checks nothing
 * of it, so this test re-states the API server's static estimate (CrdCelCost, CelCostEstimator,
 * CelDeclType; sources cited there and in docs/reliability.md) and holds the generated CRD to both
 * limits.
 */
class CrdCelCostTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();

  private static List<CrdCelCost.RuleCost> costs(Path crd) throws IOException {
    return CrdCelCost.of(
        YAML.readTree(Files.readString(crd)).at("/spec/versions/0/schema/openAPIV3Schema"));
  }

  private static String table(List<CrdCelCost.RuleCost> costs) {
    return costs.stream().map(Object::toString).collect(Collectors.joining("\n"));
  }

  @Test
  void everyRuleOfTheGeneratedCrdIsWithinThePerRuleLimit() throws IOException {
    List<CrdCelCost.RuleCost> costs =
        costs(Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml"));
    assertThat(costs).as("the CRD has rules to measure").hasSizeGreaterThanOrEqualTo(6);
    assertThat(costs)
        .as("StaticEstimatedCostLimit 10^7 per rule:\n%s", table(costs))
        .noneMatch(CrdCelCost.RuleCost::overLimit);
  }

  @Test
  void theGeneratedCrdIsWithinTheWholeSchemaLimit() throws IOException {
    List<CrdCelCost.RuleCost> costs =
        costs(Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml"));
    long total = CrdCelCost.total(costs);
    assertThat(Uint64.greaterThan(total, CrdCelCost.STATIC_ESTIMATED_CRD_COST_LIMIT))
        .as("StaticEstimatedCRDCostLimit 10^8, total %s:\n%s", Uint64.format(total), table(costs))
        .isFalse();
  }

  /**
   * Kubernetes before 1.34 ignores maxLength on an x-kubernetes-int-or-string node when it sizes it
   * for CEL (kubernetes/apiserver v0.33.0 pkg/cel/common/schemas.go: MaxElements =
   * estimateMaxStringLengthPerRequest; v0.34.0 added estimateMaxElementsFromMaxLength). The chart
   * installs on Kubernetes 1.27 or later, so every rule must also fit when every int-or-string is
   * priced as 3 MiB long.
   */
  @Test
  void everyRuleFitsAnApiServerBefore134ThatIgnoresMaxLengthOnIntOrString() throws IOException {
    com.fasterxml.jackson.databind.JsonNode schema =
        YAML.readTree(
                Files.readString(
                    Path.of("target/classes/META-INF/fabric8/modeldeployments.kvguard.io-v1.yml")))
            .at("/spec/versions/0/schema/openAPIV3Schema");
    dropIntOrStringMaxLength(schema);
    List<CrdCelCost.RuleCost> costs = CrdCelCost.of(schema);
    assertThat(costs)
        .as("StaticEstimatedCostLimit 10^7 per rule:\n%s", table(costs))
        .noneMatch(CrdCelCost.RuleCost::overLimit);
    assertThat(
            Uint64.greaterThan(CrdCelCost.total(costs), CrdCelCost.STATIC_ESTIMATED_CRD_COST_LIMIT))
        .as(table(costs))
        .isFalse();
  }

  private static void dropIntOrStringMaxLength(com.fasterxml.jackson.databind.JsonNode node) {
    if (node instanceof com.fasterxml.jackson.databind.node.ObjectNode object
        && object.path("x-kubernetes-int-or-string").asBoolean(false)) {
      object.remove("maxLength");
    }
    node.forEach(CrdCelCostTest::dropIntOrStringMaxLength);
  }

  @Test
  void theCrdBeforeIssue17IsRefusedForItsTwoUnboundedRules() throws IOException {
    List<CrdCelCost.RuleCost> costs =
        costs(Path.of("src/test/resources/crd-cost/modeldeployments-before-issue-17.yml"));
    List<String> refused =
        costs.stream()
            .filter(CrdCelCost.RuleCost::overLimit)
            .map(CrdCelCost.RuleCost::rule)
            .toList();
    assertThat(refused)
        .as(table(costs))
        .containsExactlyInAnyOrder(
            "self.all(r, self.exists_one(s, s.name == r.name))",
            "type(self) == int ? (self >= 1 && self <= 65535) : self.matches('^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$')");
    // The port rule: matches on an unbounded int-or-string, ⌈3,145,727 × 0.1⌉ × ⌈36 × 0.25⌉, plus
    // the type test (⌈3,145,726 × 0.1⌉ + 3) and the receiver; under an unbounded list it counts as
    // many times as a port fits 3 MiB (at least 1 byte and a comma: 3,145,728 / 2).
    CrdCelCost.RuleCost port =
        costs.stream().filter(c -> c.rule().startsWith("type(self)")).findFirst().orElseThrow();
    assertThat(port.maxCost()).isEqualTo(3_145_734L);
    assertThat(port.cardinality()).isEqualTo(1_572_864L);
    assertThat(
            Uint64.greaterThan(CrdCelCost.total(costs), CrdCelCost.STATIC_ESTIMATED_CRD_COST_LIMIT))
        .isTrue();
  }

  /**
   * The estimator reproduces Kubernetes' own expectations: kubernetes/apiextensions-apiserver
   * v0.36.3, pkg/apiserver/schema/cel/compilation_test.go TestCostEstimation (name; schema; rule;
   * cost without a bound; bound; cost with it). Its schemas are re-written here as JSON; "B" stands
   * for the bound (maxItems, maxProperties or maxLength of the node the rule sits on).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = ';',
      quoteCharacter = '`',
      textBlock =
          """
      number array with all;             {"type":"array","items":{"type":"number"},"maxItems":B};  self.all(x, true); 4718591; 10; 32
      string array with all;             {"type":"array","items":{"type":"string"},"maxItems":B};  self.all(x, true); 3145727; 20; 62
      boolean array with all;            {"type":"array","items":{"type":"boolean"},"maxItems":B}; self.all(x, true); 1887437; 5; 17
      array of objects with all;         {"type":"array","maxItems":B,"items":{"type":"object","required":["required"],"properties":{"required":{"type":"string"},"optional":{"type":"string"}}}}; self.all(x, true); 555128; 50; 152
      map of numbers with all;           {"type":"object","additionalProperties":{"type":"number"},"maxProperties":B}; self.all(x, true); 1348169; 10; 32
      map of strings with all;           {"type":"object","additionalProperties":{"type":"string"},"maxProperties":B}; self.all(x, true); 1179647; 3; 11
      string with contains;              {"type":"string","maxLength":B}; self.contains('test'); 314574; 10; 5
      string with startsWith;            {"type":"string","maxLength":B}; self.startsWith('test'); 2; 15; 2
      concat string;                     {"type":"string","maxLength":B}; size(self + "hello") > size("hello"); 314578; 4; 7
      index of array with strings;       {"type":"array","items":{"type":"string"},"maxItems":B}; self[1] == self[1]; 314577; 8; 314577
      O(n^2) loop with numbers;          {"type":"array","items":{"type":"number"},"maxItems":B}; self.all(x, self.all(y, true)); -1; 10; 352
      O(n^3) loop with numbers;          {"type":"array","items":{"type":"number"},"maxItems":B}; self.all(x, self.all(y, self.all(z, true))); -1; 10; 3552
      regex matches simple;              {"type":"string","maxLength":B}; self.matches("x"); 314574; 50; 22
      regex matches empty string;        {"type":"string","maxLength":B}; "".matches("(((((((((())))))))))[0-9]"); 7; 10; 7
      regex matches empty regex;         {"type":"string","maxLength":B}; self.matches(""); 1; 100; 1
      set string maxLength to zero;      {"type":"string","maxLength":B}; self == "x"; 2; 0; 1
      set maxLength greater than estimated maxLength; {"type":"array","items":{"type":"number"},"maxItems":B}; self.all(x, x == 0.0); 6291454; 6291456; 25165826
      int-or-string array with all;      {"type":"array","items":{"x-kubernetes-int-or-string":true},"maxItems":B}; self.all(x, true); 4718591; 10; 32
      index of array with int-or-strings; {"type":"array","items":{"x-kubernetes-int-or-string":true},"maxItems":B}; self[0] == 5; 3; 10; 3
      index of array with booleans;      {"type":"array","items":{"type":"boolean"},"maxItems":B}; self[0] == false; 2; 25; 2
      check cost of size call;           {"type":"object","additionalProperties":{"type":"integer"},"maxProperties":B}; oldSelf.size() == self.size(); 5; 10; 5
      enums with maxLength equals to the longest possible value; {"type":"string","enum":["A","B","C","LongValue"],"maxLength":B}; self.contains('A'); 2; 1000; 401
      """)
  void theEstimatorReproducesKubernetesOwnCostTests(
      String name, String schema, String rule, long unbounded, long bound, long bounded)
      throws IOException {
    JsonNode withoutBound =
        JSON.readTree(schema.replaceAll(",?\"max(Items|Properties|Length)\":B", ""));
    JsonNode withBound = JSON.readTree(schema.replace(":B", ":" + bound));
    long calc = CelCostEstimator.maxCost(rule, CelDeclType.of(withoutBound, false));
    if (unbounded < 0) {
      assertThat(Uint64.greaterThan(calc, CrdCelCost.STATIC_ESTIMATED_COST_LIMIT))
          .as("%s exceeds the limit", name)
          .isTrue();
    } else {
      assertThat(calc).as("%s without a bound", name).isEqualTo(unbounded);
    }
    assertThat(CelCostEstimator.maxCost(rule, CelDeclType.of(withBound, false)))
        .as("%s with %d", name, bound)
        .isEqualTo(bounded);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "isQuantity(self)", // a Kubernetes library function: its cost is Kubernetes' own
        "self.lowerAscii() == 'a'",
        "cel.bind(x, self, x == 'a')",
        "{'a': self}.size() == 1",
        "self.exists(x, y, true)",
        "matches(self, 'a')"
      })
  void aFormTheEstimatorDoesNotKnowFailsInsteadOfPassingUnmeasured(String rule) {
    CelDeclType string =
        CelDeclType.of(JSON.createObjectNode().put("type", "string").put("maxLength", 10), false);
    assertThatThrownBy(() -> CelCostEstimator.maxCost(rule, string))
        .isInstanceOf(CelCostEstimator.UnmodelledForm.class);
  }

  @Test
  void aRuleOnAFormattedStringIsNotGuessed() {
    CelDeclType duration =
        CelDeclType.of(
            JSON.createObjectNode().put("type", "string").put("format", "duration"), false);
    assertThatThrownBy(() -> CelCostEstimator.maxCost("self == duration('1s')", duration))
        .isInstanceOf(CelCostEstimator.UnmodelledForm.class);
  }
}

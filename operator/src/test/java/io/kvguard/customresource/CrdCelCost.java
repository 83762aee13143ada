package io.kvguard.customresource;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The static cost check a real API server runs on every x-kubernetes-validations rule before it
 * stores a CRD, re-stated from kubernetes/apiextensions-apiserver v0.36.3 {@code
 * pkg/apis/apiextensions/validation}:
 *
 * <ul>
 *   <li>{@code validation.go}: a rule's cost is {@code getExpressionCost} = its estimated MaxCost ×
 *       its cardinality; over {@code StaticEstimatedCostLimit} (10^7) the rule is refused, and the
 *       sum of all rules over {@code StaticEstimatedCRDCostLimit} (10^8) refuses the CRD;
 *   <li>{@code cel_validation.go}: the cardinality is the product of {@code maxItems}/{@code
 *       maxProperties} of every list and map above the rule ({@code childContext}, {@code
 *       extractMaxElements}); an object adds nothing. If any of them is unbounded, {@code
 *       pkg/apiserver/schema/cel/compilation.go maxCardinality} takes over: as many copies of the
 *       rule's node as fit a 3 MiB request, 3,145,728 / (its minimum serialized size + 1).
 * </ul>
 */
final class CrdCelCost {
  static final long STATIC_ESTIMATED_COST_LIMIT = 10_000_000L;
  static final long STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000L;

  /**
   * One rule: where, its estimated cost per evaluation, how often it may run, and their product.
   */
  record RuleCost(
      String path,
      String rule,
      long maxCost,
      Long boundedCardinality,
      long cardinality,
      long cost) {
    boolean overLimit() {
      return Uint64.greaterThan(cost, STATIC_ESTIMATED_COST_LIMIT);
    }

    @Override
    public String toString() {
      return String.format(
          "%s %s: %s × %s%s = %s",
          path,
          rule,
          Uint64.format(maxCost),
          Uint64.format(cardinality),
          boundedCardinality == null ? " (unbounded above: a 3 MiB request's worth)" : "",
          Uint64.format(cost));
    }
  }

  private CrdCelCost() {}

  /** Every rule of an openAPIV3Schema with its cost, in schema order. */
  static List<RuleCost> of(JsonNode openApiV3Schema) {
    List<RuleCost> costs = new ArrayList<>();
    walk(openApiV3Schema, "", 1L, true, costs);
    return costs;
  }

  static long total(List<RuleCost> costs) {
    long total = 0;
    for (RuleCost c : costs) {
      total = Uint64.add(total, c.cost());
    }
    return total;
  }

  /** {@code cardinality} is null when a list or map above is unbounded. */
  private static void walk(
      JsonNode schema, String path, Long cardinality, boolean root, List<RuleCost> costs) {
    JsonNode rules = schema.path("x-kubernetes-validations");
    if (rules.size() > 0) {
      CelDeclType self =
          CelDeclType.of(
              schema, root || schema.path("x-kubernetes-embedded-resource").asBoolean(false));
      if (self == null) {
        throw new CelCostEstimator.UnmodelledForm(path + ": rules on a node CEL cannot see");
      }
      for (JsonNode rule : rules) {
        if (rule.has("messageExpression")) {
          throw new CelCostEstimator.UnmodelledForm(
              path + ": messageExpression (its cost counts too)");
        }
        long maxCost = CelCostEstimator.maxCost(rule.path("rule").asText(), self);
        long effective =
            cardinality != null
                ? cardinality
                : CelDeclType.MAX_REQUEST_SIZE_BYTES / (self.minSerializedSize + 1);
        // multiplyWithOverflowGuard
        long cost = maxCost == 0 ? 0 : Uint64.multiply(maxCost, effective);
        costs.add(
            new RuleCost(
                path.isEmpty() ? "<root>" : path,
                rule.path("rule").asText(),
                maxCost,
                cardinality,
                effective,
                cost));
      }
    }
    JsonNode properties = schema.path("properties");
    properties
        .fieldNames()
        .forEachRemaining(
            name ->
                walk(
                    properties.get(name), path + "." + name, times(cardinality, 1L), false, costs));
    JsonNode additional = schema.get("additionalProperties");
    if (additional != null && additional.isObject()) {
      Long max =
          schema.has("maxProperties") ? Math.max(0, schema.get("maxProperties").asLong()) : null;
      walk(additional, path + "[*]", times(cardinality, max), false, costs);
    }
    if (schema.has("items")) {
      Long max = schema.has("maxItems") ? Math.max(0, schema.get("maxItems").asLong()) : null;
      walk(schema.get("items"), path + "[]", times(cardinality, max), false, costs);
    }
  }

  private static Long times(Long cardinality, Long factor) {
    return cardinality == null || factor == null ? null : Uint64.multiply(cardinality, factor);
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Kubernetes label-selector semantics (matchLabels AND every matchExpression), with validation. */
public final class LabelSelectors {
  private LabelSelectors() {}

  /**
   * Why a selector cannot be applied, or empty when it is valid. An empty selector is refused: it
   * would select every pod.
   */
  public static Optional<String> problem(LabelSelector selector) {
    if (selector == null) {
      return Optional.of("selector is missing");
    }
    boolean noLabels = selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty();
    boolean noExpressions =
        selector.getMatchExpressions() == null || selector.getMatchExpressions().isEmpty();
    if (noLabels && noExpressions) {
      return Optional.of("selector is empty and would select every pod in the namespace");
    }
    if (!noLabels) {
      for (Map.Entry<String, String> label : selector.getMatchLabels().entrySet()) {
        // The API server stores a label selector's values as strings; an object that reached
        // kvguard otherwise (a null in JSON) selects nothing rather than stop the namespace's
        // cache.
        if (label.getKey() == null || label.getValue() == null) {
          return Optional.of("matchLabels " + label.getKey() + " has no value");
        }
      }
    }
    if (!noExpressions) {
      for (LabelSelectorRequirement requirement : selector.getMatchExpressions()) {
        String operator = requirement.getOperator();
        List<String> values = requirement.getValues() == null ? List.of() : requirement.getValues();
        if (requirement.getKey() == null || requirement.getKey().isBlank()) {
          return Optional.of("a matchExpression has no key");
        }
        if ("In".equals(operator) || "NotIn".equals(operator)) {
          if (values.isEmpty()) {
            return Optional.of(
                "matchExpression " + requirement.getKey() + " " + operator + " needs values");
          }
        } else if ("Exists".equals(operator) || "DoesNotExist".equals(operator)) {
          if (!values.isEmpty()) {
            return Optional.of(
                "matchExpression " + requirement.getKey() + " " + operator + " takes no values");
          }
        } else {
          return Optional.of(
              "matchExpression " + requirement.getKey() + " has unknown operator " + operator);
        }
      }
    }
    return Optional.empty();
  }

  public static boolean matches(LabelSelector selector, Map<String, String> podLabels) {
    if (problem(selector).isPresent()) {
      return false;
    }
    Map<String, String> labels = podLabels == null ? Map.of() : podLabels;
    if (selector.getMatchLabels() != null) {
      for (Map.Entry<String, String> wanted : selector.getMatchLabels().entrySet()) {
        if (!wanted.getValue().equals(labels.get(wanted.getKey()))) {
          return false;
        }
      }
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement requirement : selector.getMatchExpressions()) {
        String value = labels.get(requirement.getKey());
        boolean ok =
            switch (requirement.getOperator()) {
              case "In" -> value != null && requirement.getValues().contains(value);
              case "NotIn" -> value == null || !requirement.getValues().contains(value);
              case "Exists" -> value != null;
              case "DoesNotExist" -> value == null;
              default -> false;
            };
        if (!ok) {
          return false;
        }
      }
    }
    return true;
  }
}

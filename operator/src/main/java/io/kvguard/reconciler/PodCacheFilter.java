package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Which pods of a namespace its pod cache keeps: those a selector of a ModelDeployment there
 * selects (any role, {@link LabelSelectors}' semantics), and those carrying anything kvguard writes
 * or gates by, so that a policy that let a pod go, or is being deleted, still finds it to hand it
 * back: the verdict record annotation, the {@code kvguard.io/pool-verified} condition or readiness
 * gate, the routing label, the context-length label. Any other pod (a batch job beside the engines)
 * is held as its key alone ({@link LeanPodStore}).
 *
 * <p>Fixed for the life of one informer: when the namespace's selectors change, {@link PodCache}
 * lists the namespace again with the new filter before the next pass there reads it. Between, a pod
 * whose labels change so that it is selected arrives as an event and is kept from that event on.
 */
record PodCacheFilter(Set<LabelSelector> selectors) {

  PodCacheFilter {
    selectors = Set.copyOf(selectors);
  }

  /** The filter for these policies of one namespace: every selector of every role, valid or not. */
  static PodCacheFilter of(Stream<ModelDeployment> policies) {
    Set<LabelSelector> selectors = new HashSet<>();
    policies.forEach(
        md -> {
          if (md.getSpec() != null && md.getSpec().getRoles() != null) {
            md.getSpec().getRoles().stream()
                .map(RoleSpec::getSelector)
                .filter(java.util.Objects::nonNull)
                .forEach(selectors::add);
          }
        });
    return new PodCacheFilter(selectors);
  }

  boolean keeps(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    return carriesKvguardMarks(pod)
        || selectors.stream().anyMatch(selector -> LabelSelectors.matches(selector, labels));
  }

  /** Anything kvguard wrote on the pod, or a gate it is to answer. */
  static boolean carriesKvguardMarks(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    if (labels != null
        && (labels.containsKey(GateNames.VERIFIED_LABEL)
            || labels.containsKey(GateNames.CONTEXT_LENGTH_LABEL))) {
      return true;
    }
    if (annotations != null && annotations.containsKey(GateNames.VERDICTS_ANNOTATION)) {
      return true;
    }
    if (pod.getStatus() != null
        && orEmpty(pod.getStatus().getConditions()).stream()
            .anyMatch(condition -> GateNames.CONDITION_TYPE.equals(condition.getType()))) {
      return true;
    }
    return pod.getSpec() != null
        && orEmpty(pod.getSpec().getReadinessGates()).stream()
            .anyMatch(gate -> GateNames.CONDITION_TYPE.equals(gate.getConditionType()));
  }

  private static <T> List<T> orEmpty(List<T> list) {
    return list == null ? List.of() : list;
  }
}

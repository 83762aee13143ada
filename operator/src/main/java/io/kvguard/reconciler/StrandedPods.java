package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.gate.PodGate;
import io.kvguard.gate.VerdictRecords;
import io.kvguard.verdict.GateReason;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Pods a deleted ModelDeployment left gated (issue 28 §2): its hand-back failed for good (403, a
 * webhook, ...) and the finalizer was removed anyway, so the pod keeps the condition, label and
 * verdict record the policy last wrote, and nothing will ever write them again.
 *
 * <p>A pod is stranded when, in its namespace's pod cache,
 *
 * <ul>
 *   <li>its {@code kvguard.io/verdicts} record names a ModelDeployment absent from the informer
 *       cache of that namespace. The record is the mark that says which policy wrote: every gate a
 *       pass writes carries it, and every hand-back or let-go removes it together with the gate
 *       (also a pod a live policy stopped selecting, let go shut with {@code NoLongerSelected}:
 *       that pod has no record left, and is not stranded but deliberately shut). The label names no
 *       policy (a tenant may set it, runbook), the condition's message is prose;
 *   <li>it still shows a gate: the {@code kvguard.io/verified} label, or the {@code
 *       kvguard.io/pool-verified} condition other than what a hand-back writes (True, {@code
 *       PolicyRemoved}). A policy that was deleted while others held the pod leaves its record
 *       behind even when the last of them hands the pod back open later: that pod is not gated;
 *   <li>no ModelDeployment there selects it with any role: one that does gates it now, whatever a
 *       gone one left on it;
 *   <li>it is not being deleted: it gets no traffic and will be gone.
 * </ul>
 *
 * A policy being deleted is still in the cache: its pods are not stranded while it hands them back.
 * Counted from the caches alone, never from the API server.
 */
final class StrandedPods {
  /**
   * How often every cached namespace is counted again: soon after a pod is handed back by hand or
   * deleted (neither triggers a pass), cheap (the caches only; the verdict records of the pods
   * carrying one are parsed), well within the alert's 10 minutes.
   */
  static final java.time.Duration RECOUNT = java.time.Duration.ofSeconds(5);

  private StrandedPods() {}

  /** How many of a namespace's cached pods are stranded, given its cached ModelDeployments. */
  static long count(Stream<Pod> cachedPods, List<ModelDeployment> policies) {
    Set<String> existing =
        policies.stream().map(md -> md.getMetadata().getName()).collect(Collectors.toSet());
    List<LabelSelector> selectors =
        policies.stream()
            .filter(md -> md.getSpec() != null && md.getSpec().getRoles() != null)
            .flatMap(md -> md.getSpec().getRoles().stream())
            .map(RoleSpec::getSelector)
            .filter(Objects::nonNull)
            .toList();
    return cachedPods.filter(pod -> isStranded(pod, existing, selectors)).count();
  }

  static boolean isStranded(Pod pod, Set<String> existing, List<LabelSelector> selectors) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    if (PodGate.terminating(pod)
        || annotations == null
        || !annotations.containsKey(GateNames.VERDICTS_ANNOTATION)) {
      return false;
    }
    if (!stillGated(pod) || existing.containsAll(VerdictRecords.of(pod).keySet())) {
      return false;
    }
    return selectors.stream()
        .noneMatch(selector -> LabelSelectors.matches(selector, pod.getMetadata().getLabels()));
  }

  /** Whether the pod shows anything of a gate other than a hand-back's. */
  private static boolean stillGated(Pod pod) {
    Map<String, String> labels = pod.getMetadata().getLabels();
    if (labels != null && labels.containsKey(GateNames.VERIFIED_LABEL)) {
      return true;
    }
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(
                c ->
                    GateNames.CONDITION_TYPE.equals(c.getType())
                        && !("True".equals(c.getStatus())
                            && GateReason.PolicyRemoved.name().equals(c.getReason())));
  }
}

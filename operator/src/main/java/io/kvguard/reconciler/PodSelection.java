package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.RoleSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The first stage of a pass: which pods a policy's roles select, each pod once. A pod that several
 * roles select belongs to the first of them (the order of {@code spec.roles}): it has one gate,
 * judged one way. Resolving this here, before anything is asked, keeps the other roles from probing
 * a pod for verdicts nobody would use.
 */
final class PodSelection {
  private PodSelection() {}

  /** One pod and the role that judges it. */
  record Selected(RoleSpec role, Pod pod) {}

  /** {@code selectedBy}: the pods a role selects, in the order they are to be judged. */
  static List<Selected> firstRoleWins(
      List<RoleSpec> roles, Function<RoleSpec, List<Pod>> selectedBy) {
    List<Selected> selected = new ArrayList<>();
    Set<String> taken = new HashSet<>();
    for (RoleSpec role : roles) {
      for (Pod pod : selectedBy.apply(role)) {
        if (taken.add(pod.getMetadata().getUid())) {
          selected.add(new Selected(role, pod));
        }
      }
    }
    return selected;
  }
}

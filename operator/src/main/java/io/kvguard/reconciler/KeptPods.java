package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The pod UIDs each policy had at the end of its last pass, so that what it remembers of pods it no
 * longer has (deleted, or recreated under a new UID) can be forgotten: probe results and decisions
 * must not grow with pod churn. Comparing with the last pass costs what the policy's own pods cost,
 * not a scan of every pod.
 */
final class KeptPods {
  private final ConcurrentMap<ResourceID, Set<String>> lastPass = new ConcurrentHashMap<>();

  /** Records this pass's pods; returns the UIDs the policy had last pass and has no longer. */
  Set<String> gone(ResourceID policy, Set<String> keptNow) {
    Set<String> before = lastPass.put(policy, Set.copyOf(keptNow));
    if (before == null) {
      return Set.of();
    }
    Set<String> gone = new HashSet<>(before);
    gone.removeAll(keptNow);
    return gone;
  }

  void forget(ResourceID policy) {
    lastPass.remove(policy);
  }
}

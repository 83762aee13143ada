package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The pods (by UID, with name and role) each policy had at the end of its last pass, so that what
 * it remembers of pods it no longer has (deleted, recreated under a new UID, or no longer selected)
 * can be forgotten, and a pod it stopped selecting is let go shut even when the record that named
 * it on the pod was removed by hand: probe results and decisions must not grow with pod churn.
 * Comparing with the last pass costs what the policy's own pods cost, not a scan of every pod.
 */
final class KeptPods {
  /** A pod a pass kept: its name and the role that selected it. */
  record Kept(String name, String role) {}

  private final ConcurrentMap<ResourceID, Map<String, Kept>> lastPass = new ConcurrentHashMap<>();

  /**
   * The same, by pod UID: the policies whose last pass kept the pod. A pod whose labels and record
   * were both edited away is concerned by no policy any more, so its update event reaches the
   * policy that kept it only through this.
   */
  private final ConcurrentMap<String, Set<ResourceID>> byPod = new ConcurrentHashMap<>();

  /**
   * Records this pass's pods (by UID); returns those the policy had last pass and has no longer.
   */
  synchronized Map<String, Kept> gone(ResourceID policy, Map<String, Kept> keptNow) {
    Map<String, Kept> before = lastPass.put(policy, Map.copyOf(keptNow));
    keptNow.keySet().forEach(uid -> byPod.computeIfAbsent(uid, k -> new HashSet<>()).add(policy));
    if (before == null) {
      return Map.of();
    }
    Map<String, Kept> gone = new HashMap<>(before);
    gone.keySet().removeAll(keptNow.keySet());
    gone.keySet().forEach(uid -> unindex(uid, policy));
    return gone;
  }

  /** The policies whose last pass kept the pod with this UID. */
  Set<ResourceID> keptBy(String podUid) {
    Set<ResourceID> policies = byPod.get(podUid);
    if (policies == null) {
      return Set.of();
    }
    synchronized (this) {
      return Set.copyOf(policies);
    }
  }

  /** The policies with pods recorded here (the sweep of deleted policies, and tests). */
  synchronized Set<ResourceID> policies() {
    Set<ResourceID> policies = new HashSet<>(lastPass.keySet());
    byPod.values().forEach(policies::addAll);
    return policies;
  }

  synchronized void forget(ResourceID policy) {
    Map<String, Kept> kept = lastPass.remove(policy);
    if (kept != null) {
      kept.keySet().forEach(uid -> unindex(uid, policy));
    }
  }

  private void unindex(String uid, ResourceID policy) {
    Set<ResourceID> policies = byPod.get(uid);
    if (policies != null && policies.remove(policy) && policies.isEmpty()) {
      byPod.remove(uid);
    }
  }
}

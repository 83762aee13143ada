package io.kvguard.gate;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * When several ModelDeployments select one pod, the pod has one gate: the strictest decision wins.
 * A ModelDeployment that selects the pod but has not decided yet counts as "shut", so a restart of
 * the operator cannot open a gate that another policy would keep shut.
 */
public final class GateArbiter {

  /**
   * The decision to write and, when other policies are involved, what to say about them. {@code
   * shutOnlyByStandIns}: no policy decided to keep the gate shut; it is shut only by the "awaiting
   * its verdict" put in for policies with no decision here (not decided yet, or let go of the pod
   * while the caller's view of who concerns the pod is older than that).
   */
  public record Arbitration(
      GateDecision decision,
      List<String> conflicts,
      boolean changedMine,
      boolean shutOnlyByStandIns) {}

  private static final int STRIPES = 4096;

  private final ConcurrentMap<String, ConcurrentMap<ResourceID, GateDecision>> byPod =
      new ConcurrentHashMap<>();
  private final Object[] stripes = new Object[STRIPES];

  public GateArbiter() {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new Object();
    }
  }

  /**
   * The lock a policy holds from arbitrating a pod until its write is done. Passes of different
   * policies run at once: without it, one could decide "open" from another's old decision and write
   * after that other shut the pod. Striped (4,096, so passes of different policies writing
   * different pods rarely share one while a write is on its way), so it costs nothing per pod.
   */
  public Object lockFor(String podUid) {
    return stripes[Math.floorMod(podUid == null ? 0 : podUid.hashCode(), STRIPES)];
  }

  public Arbitration arbitrate(
      String podUid, ResourceID self, GateDecision mine, Set<ResourceID> otherSelectors) {
    ConcurrentMap<ResourceID, GateDecision> decisions =
        byPod.computeIfAbsent(podUid, k -> new ConcurrentHashMap<>());
    GateDecision before = decisions.put(self, mine);
    boolean changed = !mine.equals(before);
    if (otherSelectors.isEmpty()) {
      return new Arbitration(mine, List.of(), changed, false);
    }
    // Every policy computes the same answer from the same inputs, in name order, so two policies
    // never
    // take turns rewriting the pod with their own message.
    List<ResourceID> all = new ArrayList<>(otherSelectors);
    all.add(self);
    all.sort(Comparator.comparing(ResourceID::toString));
    List<String> conflicts = new ArrayList<>();
    ResourceID winner = null;
    GateDecision winning = null;
    boolean decidedShut = false;
    for (ResourceID policy : all) {
      GateDecision theirs = policy.equals(self) ? mine : decisions.get(policy);
      boolean undecided = theirs == null;
      if (undecided) {
        theirs = new GateDecision(false, GateReason.AwaitingProbe, "awaiting its verdict");
      } else if (!theirs.open()) {
        decidedShut = true;
      }
      if (!policy.equals(self)) {
        conflicts.add(
            "pod also selected by ModelDeployment "
                + policy.getName()
                + " ("
                + (theirs.open() ? "open" : "shut: " + theirs.reason())
                + ")");
      }
      if (winning == null || (winning.open() && !theirs.open())) {
        winner = policy;
        winning = theirs;
      }
    }
    GateDecision decision =
        new GateDecision(
            winning.open(),
            winning.reason(),
            "ModelDeployment " + winner.getName() + ": " + winning.message());
    return new Arbitration(decision, conflicts, changed, !decision.open() && !decidedShut);
  }

  /** The policies with a decision on some pod (for the reconciler's sweep of deleted policies). */
  public Set<ResourceID> policies() {
    Set<ResourceID> policies = new java.util.HashSet<>();
    byPod.values().forEach(decisions -> policies.addAll(decisions.keySet()));
    return policies;
  }

  /**
   * Everything the policy decided goes, pod by pod under each pod's lock (as {@link #arbitrate}
   * runs), so a pod's last decision leaving cannot race another policy's first.
   */
  public void forgetPolicy(ResourceID self) {
    for (String podUid : List.copyOf(byPod.keySet())) {
      synchronized (lockFor(podUid)) {
        forget(podUid, self);
      }
    }
  }

  public void forget(String podUid, ResourceID self) {
    Map<ResourceID, GateDecision> decisions = byPod.get(podUid);
    if (decisions != null) {
      decisions.remove(self);
      if (decisions.isEmpty()) {
        byPod.remove(podUid);
      }
    }
  }
}

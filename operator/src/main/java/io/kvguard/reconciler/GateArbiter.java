package io.kvguard.reconciler;

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
 * When several ModelDeployments select one pod, the pod has one gate: the strictest decision wins. A
 * ModelDeployment that selects the pod but has not decided yet counts as "shut", so a restart of the
 * operator cannot open a gate that another policy would keep shut.
 */
final class GateArbiter {

  /** The decision to write and, when other policies are involved, what to say about them. */
  record Arbitration(GateDecision decision, List<String> conflicts, boolean changedMine) {}

  private final ConcurrentMap<String, ConcurrentMap<ResourceID, GateDecision>> byPod = new ConcurrentHashMap<>();

  Arbitration arbitrate(String podUid, ResourceID self, GateDecision mine, Set<ResourceID> otherSelectors) {
    ConcurrentMap<ResourceID, GateDecision> decisions = byPod.computeIfAbsent(podUid, k -> new ConcurrentHashMap<>());
    GateDecision before = decisions.put(self, mine);
    boolean changed = !mine.equals(before);
    if (otherSelectors.isEmpty()) {
      return new Arbitration(mine, List.of(), changed);
    }
    List<ResourceID> others = new ArrayList<>(otherSelectors);
    others.sort(Comparator.comparing(ResourceID::toString));
    List<String> conflicts = new ArrayList<>();
    GateDecision strictest = mine;
    for (ResourceID other : others) {
      GateDecision theirs = decisions.get(other);
      String name = other.getName();
      if (theirs == null) {
        theirs = new GateDecision(false, GateReason.AwaitingProbe, "awaiting the verdict of ModelDeployment " + name);
      }
      conflicts.add("pod also selected by ModelDeployment " + name + " (" + (theirs.open() ? "open" : "shut: " + theirs.reason()) + ")");
      if (strictest.open() && !theirs.open()) {
        strictest = new GateDecision(false, theirs.reason(), "ModelDeployment " + name + ": " + theirs.message());
      }
    }
    return new Arbitration(strictest, conflicts, changed);
  }

  void forget(String podUid, ResourceID self) {
    Map<ResourceID, GateDecision> decisions = byPod.get(podUid);
    if (decisions != null) {
      decisions.remove(self);
      if (decisions.isEmpty()) {
        byPod.remove(podUid);
      }
    }
  }
}

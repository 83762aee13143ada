package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.Enforcement;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateWriter;
import io.kvguard.gate.PodGate;
import io.kvguard.gate.RecordSigner;
import io.kvguard.gate.RecordUpdate;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.observe.PassReport;
import io.kvguard.verdict.GateDecision;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The write stage of a pass: each assessed pod's gate gets the decision every policy selecting it
 * agrees on, pods that left the policy are let go shut (their labels or the selector changed; no
 * policy proved them), and what the policy kept about pods it no longer has goes. Also hands a
 * deleted policy's pods back. Returns what it wrote ({@link Written}); it announces nothing itself.
 */
final class GateStage {
  private final GateWriter writer;
  private final RecordSigner signer;
  private final Cluster cluster;
  private final KeptPods keptPods = new KeptPods();

  /** Lets go of what the probes keep of a pod for a policy. */
  private final BiConsumer<String, ResourceID> forgetProbes;

  /** Asks another policy for a pass (its pods show a decision that included ours). */
  private final Consumer<ResourceID> passOf;

  /** What the stage reads from the informer caches. */
  interface Cluster {
    /**
     * The policies other than {@code self} that select the pod, recorded a verdict on it or list
     * it.
     */
    Set<ResourceID> othersConcerning(Pod pod, ResourceID self);

    Optional<Pod> cachedPod(String namespace, String name);

    /** Whether the policy enforces its verdicts (not Audit mode); true when it cannot be told. */
    boolean enforces(ResourceID policy);
  }

  GateStage(
      GateWriter writer,
      RecordSigner signer,
      Cluster cluster,
      BiConsumer<String, ResourceID> forgetProbes,
      Consumer<ResourceID> passOf) {
    this.writer = writer;
    this.signer = signer;
    this.cluster = cluster;
    this.forgetProbes = forgetProbes;
    this.passOf = passOf;
  }

  /** The policies whose last pass kept the pod with this UID (for pod events). */
  Set<ResourceID> keptBy(String podUid) {
    return keptPods.keptBy(podUid);
  }

  /**
   * The policies this stage keeps something for: the pods of their last pass, their decisions (the
   * sweep of deleted policies, and tests).
   */
  Set<ResourceID> policies() {
    Set<ResourceID> held = new java.util.HashSet<>(keptPods.policies());
    held.addAll(writer.policies());
    return held;
  }

  /**
   * Everything kept for the policy goes: the pods of its last pass and its decision on every pod,
   * including pods its hand-back did not write (being deleted, or no longer cached).
   */
  void forget(ResourceID policy) {
    keptPods.forget(policy);
    writer.forgetPolicy(policy);
  }

  /**
   * What one pass wrote.
   *
   * @param kept the assessments, with conflicts with other policies noted
   * @param conflicts one line per pod another policy also selects, for the status
   * @param unwritten pods whose write failed or was dropped because their gate changed under it:
   *     decided again soon
   */
  record Written(
      List<PodAssessment> kept,
      List<String> conflicts,
      List<String> unwritten,
      List<PassReport.GateFlip> flips,
      List<PassReport.WriteFailure> failures,
      List<PassReport.Released> released) {}

  /**
   * {@code hooks}: the finalizer before the first write, each accepted write into the pod cache.
   * {@code predecessorGone}: the pass runs in the scope of the deletion of a policy that had the
   * same name, so the pods recorded under the name that this policy does not select were that
   * policy's, and are handed back open as its deletion would have, not let go shut.
   */
  Written write(
      ModelDeployment md,
      GateWriter.Hooks hooks,
      List<PodAssessment> assessments,
      Map<String, VerdictRecord> before,
      Instant now,
      boolean predecessorGone) {
    ResourceID self = ResourceID.fromResource(md);
    boolean audit =
        md.getSpec() != null && md.getSpec().effectiveEnforcement() == Enforcement.Audit;
    Written written =
        new Written(
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>(),
            new ArrayList<>());
    for (PodAssessment assessment : assessments) {
      Set<ResourceID> others = cluster.othersConcerning(assessment.pod(), self);
      // The policy's own verdict goes on the pod with the decision: it survives an operator restart
      // there.
      RecordUpdate record =
          new RecordUpdate(
              md.getMetadata().getName(),
              signer.sign(
                  assessment.pod(),
                  md.getMetadata().getName(),
                  PodRecords.of(assessment, before.get(assessment.podName()), now)));
      GateWriter.Outcome outcome =
          writer.decide(
              assessment.pod(),
              self,
              GateDecision.of(assessment.verdict(), audit),
              others,
              record,
              hooks);
      note(written, assessment.pod(), outcome);
      if (outcome.flippedTo() != null) {
        written.flips().add(new PassReport.GateFlip(assessment.role(), outcome.flippedTo()));
      }
      List<String> conflicts = outcome.arbitration().conflicts();
      if (conflicts.isEmpty()) {
        written.kept().add(assessment);
        continue;
      }
      written.conflicts().add(assessment.podName() + ": " + String.join(", ", conflicts));
      if (outcome.arbitration().changedMine()) {
        // The other policies' pods show a decision that included ours: let them recompute it.
        others.forEach(passOf);
      }
      written.kept().add(withNotes(assessment, conflicts));
    }
    Map<String, KeptPods.Kept> keptNow =
        written.kept().stream()
            .collect(
                Collectors.toMap(
                    PodAssessment::podUid,
                    a -> new KeptPods.Kept(a.podName(), a.role()),
                    (a, b) -> a));
    Map<String, KeptPods.Kept> gone = keptPods.gone(self, keptNow);
    // An Audit policy never held a gate shut, so it has nothing to keep shut either.
    GateDecision left =
        predecessorGone
            ? GateDecision.policyRemoved(md.getMetadata().getName())
            : audit
                ? GateDecision.released(
                    "no longer selected by ModelDeployment "
                        + md.getMetadata().getName()
                        + " (Audit mode)")
                : GateDecision.noLongerSelected(md.getMetadata().getName());
    releaseDeselected(md, hooks, self, before, gone, written, left);
    // What this policy remembers of pods it no longer has (deleted, recreated under a new UID, or
    // let go) goes now.
    for (String uid : gone.keySet()) {
      forgetProbes.accept(uid, self);
      writer.forget(uid, self);
    }
    return written;
  }

  /**
   * A policy being deleted hands every pod it selected or recorded a verdict on back open, unless
   * another policy holds it. Returns the pods it could not hand back: never a reason to keep the
   * finalizer (when a namespace is deleted its policies go with the RoleBinding that lets kvguard
   * write its pods, 403, and with the pods, 404), as a kept finalizer would hold the whole
   * namespace in Terminating.
   */
  List<PassReport.WriteFailure> handBack(
      ModelDeployment md, GateWriter.Hooks hooks, Map<String, Pod> concerned) {
    ResourceID self = ResourceID.fromResource(md);
    GateDecision removed = GateDecision.policyRemoved(md.getMetadata().getName());
    List<PassReport.WriteFailure> failed = new ArrayList<>();
    for (Pod pod : concerned.values()) {
      try {
        GateWriter.Outcome outcome = release(md, hooks, self, pod, removed);
        if (outcome.status() == GateWriter.Status.CONFLICT) {
          // The gate changed under the write: hand back what the pod shows now (this decision needs
          // no verdict).
          Optional<Pod> fresh = writer.reread(pod);
          outcome = fresh.isEmpty() ? outcome : release(md, hooks, self, fresh.get(), removed);
          if (fresh.isPresent() && outcome.status() == GateWriter.Status.CONFLICT) {
            throw new IllegalStateException("the pod's gate kept changing under the hand-back");
          }
        }
        if (outcome.status() == GateWriter.Status.FAILED) {
          throw outcome.error();
        }
      } catch (RuntimeException e) {
        failed.add(new PassReport.WriteFailure(pod, e));
      }
    }
    keptPods.forget(self);
    return failed;
  }

  private void releaseDeselected(
      ModelDeployment md,
      GateWriter.Hooks hooks,
      ResourceID self,
      Map<String, VerdictRecord> before,
      Map<String, KeptPods.Kept> goneSinceLastPass,
      Written written,
      GateDecision left) {
    Set<String> selected =
        written.kept().stream().map(PodAssessment::podName).collect(Collectors.toSet());
    for (String name : before.keySet()) {
      if (!selected.contains(name)) {
        written.released().add(new PassReport.Released(name, before.get(name).role()));
        cluster
            .cachedPod(md.getMetadata().getNamespace(), name)
            .ifPresent(pod -> note(written, pod, release(md, hooks, self, pod, left)));
      }
    }
    // A pod the last pass kept that still exists under the same UID but is no longer selected, and
    // whose record (tenant-writable pod metadata) no longer names the policy: let go shut all the
    // same, or removing the record together with a selector label would keep its gate open.
    goneSinceLastPass.forEach(
        (uid, kept) -> {
          if (selected.contains(kept.name()) || before.containsKey(kept.name())) {
            return;
          }
          cluster
              .cachedPod(md.getMetadata().getNamespace(), kept.name())
              .filter(pod -> uid.equals(pod.getMetadata().getUid()))
              .ifPresent(
                  pod -> {
                    written.released().add(new PassReport.Released(kept.name(), kept.role()));
                    note(written, pod, release(md, hooks, self, pod, left));
                  });
        });
  }

  /**
   * A pod that left this policy gets {@code left} (open when the policy was deleted, shut when its
   * labels or the selector changed), unless another policy holds it. A pod being deleted needs
   * nothing back: two writes to it would be wasted (often answered 404 or 422).
   */
  private GateWriter.Outcome release(
      ModelDeployment md, GateWriter.Hooks hooks, ResourceID self, Pod pod, GateDecision left) {
    GateWriter.Outcome outcome =
        new GateWriter.Outcome(GateWriter.Status.WRITTEN, null, null, null);
    if (!PodGate.terminating(pod)) {
      Set<ResourceID> others = cluster.othersConcerning(pod, self);
      // Letting a pod go shut, only an enforcing policy may take it over: an Audit one never holds
      // a gate shut, so it would open it.
      Set<ResourceID> holders =
          left.open()
              ? others
              : others.stream().filter(cluster::enforces).collect(Collectors.toSet());
      outcome =
          writer.release(
              pod, self, left, holders, RecordUpdate.remove(md.getMetadata().getName()), hooks);
      others.forEach(passOf);
    }
    forgetProbes.accept(pod.getMetadata().getUid(), self);
    return outcome;
  }

  private static void note(Written written, Pod pod, GateWriter.Outcome outcome) {
    if (outcome.status() == GateWriter.Status.FAILED) {
      written.failures().add(new PassReport.WriteFailure(pod, outcome.error()));
    }
    if (!outcome.written()) {
      written.unwritten().add(pod.getMetadata().getName());
    }
  }

  private static PodAssessment withNotes(PodAssessment assessment, List<String> extra) {
    List<String> notes = new ArrayList<>(assessment.notes());
    extra.forEach(conflict -> notes.add("ConflictingPolicies: " + conflict));
    return new PodAssessment(
        assessment.pod(),
        assessment.role(),
        assessment.labelOnly(),
        assessment.containerID(),
        assessment.restartCount(),
        assessment.verdict(),
        assessment.observation(),
        notes,
        assessment.nextProbeAt(),
        assessment.refusal());
  }
}

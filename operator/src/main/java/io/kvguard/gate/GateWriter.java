package io.kvguard.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.util.Optional;
import java.util.Set;

/**
 * Writes policies' decisions onto pods' gates. A pod has one gate however many policies select it:
 * a decision is first arbitrated with theirs ({@link GateArbiter}: the strictest wins) and the
 * pod's lock is held until it is written. Says what happened ({@link Outcome}) instead of telling
 * anyone: the pass decides what follows.
 */
public final class GateWriter {
  private final PodGate gate;
  private final GateArbiter arbiter = new GateArbiter();

  public GateWriter(PodGate gate) {
    this.gate = gate;
  }

  /** What must happen around a write, in the order the write needs it. */
  public interface Hooks {
    /** Runs before each patch is sent (never when the pod already shows what would be written). */
    void beforeWrite();

    /**
     * An accepted write, with the pod it replaced (so a cache can know our own writes as they land)
     * and {@code read}, the version the decision was made on: older than {@code previous} when a
     * conflict made the write read the pod again ({@link PodGate.Accepted}).
     */
    void accepted(Pod written, Pod previous, Pod read);
  }

  /**
   * {@code CONFLICT}: the pod's gate changed after the read the decision was made on; it is decided
   * again.
   */
  public enum Status {
    WRITTEN,
    CONFLICT,
    FAILED
  }

  /**
   * @param arbitration the decision arbitrated with the other policies and what was said of them (a
   *     decision only)
   * @param flippedTo the state a decision wrote the condition to, when it was absent or the other
   *     one; else null
   * @param error why the API server refused the write (FAILED only)
   */
  public record Outcome(
      Status status,
      GateArbiter.Arbitration arbitration,
      Boolean flippedTo,
      RuntimeException error) {
    public boolean written() {
      return status == Status.WRITTEN;
    }

    Outcome arbitrated(GateArbiter.Arbitration by) {
      return new Outcome(status, by, flippedTo, error);
    }
  }

  /**
   * Writes {@code mine} as arbitrated with the other policies that select the pod, and the policy's
   * record.
   */
  public Outcome decide(
      Pod pod,
      ResourceID self,
      GateDecision mine,
      Set<ResourceID> others,
      RecordUpdate record,
      Hooks hooks) {
    synchronized (arbiter.lockFor(pod.getMetadata().getUid())) {
      GateArbiter.Arbitration arbitration =
          arbiter.arbitrate(pod.getMetadata().getUid(), self, mine, others);
      GateDecision decision = arbitration.decision();
      if (GateState.letGoShut(pod)
          && (decision.reason() == GateReason.Audit || arbitration.shutOnlyByStandIns())) {
        // An Audit policy never held this gate shut, so it may not open it either: an Enforce
        // policy let the pod go shut when its labels changed, and a label edit must not open a gate
        // by moving the pod under an Audit policy. Nor may a gate shut only by "awaiting" put in
        // for a policy with no decision replace it: that is often the very policy that let the pod
        // go, still named by a cache older than its release (its status listing the pod). Written,
        // it would hide why the gate is shut and, no longer NoLongerSelected, let the next Audit
        // pass open it. Only the record is written; a policy that decides writes its decision.
        decision = null;
      }
      return write(pod, decision, record, hooks, true).arbitrated(arbitration);
    }
  }

  /**
   * The policy lets go of the pod: handed back with {@code released} when no other policy holds it;
   * either way the policy's record leaves it, so the others decide without it.
   */
  public Outcome release(
      Pod pod,
      ResourceID self,
      GateDecision released,
      Set<ResourceID> others,
      RecordUpdate letGo,
      Hooks hooks) {
    synchronized (arbiter.lockFor(pod.getMetadata().getUid())) {
      arbiter.forget(pod.getMetadata().getUid(), self);
      return write(pod, others.isEmpty() ? released : null, letGo, hooks, false);
    }
  }

  /** What the policy decided for a pod it no longer has goes. */
  public void forget(String podUid, ResourceID self) {
    arbiter.forget(podUid, self);
  }

  /** The policies with a decision on some pod. */
  public Set<ResourceID> policies() {
    return arbiter.policies();
  }

  /** Everything the policy decided goes (a deleted policy, on every pod at once). */
  public void forgetPolicy(ResourceID self) {
    arbiter.forgetPolicy(self);
  }

  /**
   * The pod as the API server holds it now; empty when it is gone or was recreated under a new UID.
   */
  public Optional<Pod> reread(Pod pod) {
    return gate.reread(pod);
  }

  /** {@code decision} null leaves condition and label and writes only the record. */
  private Outcome write(
      Pod pod, GateDecision decision, RecordUpdate record, Hooks hooks, boolean judged) {
    Boolean wasOpen = GateState.conditionOpen(pod);
    if (decision != null
        && wasOpen == null
        && decision.reason() == GateReason.AwaitingProbe
        && !GateState.labelled(pod)) {
      // A pod that never had a kvguard condition or label is already shut (its readiness gate has
      // no condition, routers see no label): writing "awaiting" would only double the writes of
      // every new pod.
      return new Outcome(Status.WRITTEN, null, null, null);
    }
    try {
      PodGate.Outcome outcome =
          gate.apply(pod, decision, record, hooks::beforeWrite, hooks::accepted);
      boolean flipped =
          judged
              && decision != null
              && outcome.conditionWritten()
              && (wasOpen == null || wasOpen != decision.open());
      return new Outcome(
          outcome.superseded() ? Status.CONFLICT : Status.WRITTEN,
          null,
          flipped ? decision.open() : null,
          null);
    } catch (RuntimeException e) {
      // One pod's write failing (a webhook refusing it, retries used up) must not leave the others
      // unwritten.
      return new Outcome(Status.FAILED, null, null, e);
    }
  }
}

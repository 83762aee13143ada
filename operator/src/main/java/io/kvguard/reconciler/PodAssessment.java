package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.RejectionOutcome;
import java.util.List;

/**
 * What the reconciler concluded about one selected pod in one pass.
 *
 * @param observation the figures the verdict was judged from, or null when none are known
 * @param labelOnly the pod's spec lacks the kvguard.io/pool-verified readiness gate
 * @param nextProbeAt when the current answer falls due for a periodic re-probe, null when not known
 * @param refusal the over-limit prompt this container refused, with the status and error class it
 *     answered, when the verdict rests on that refusal (seen now, or recorded in status for this
 *     very container and prompt); null otherwise
 */
record PodAssessment(
    Pod pod,
    String role,
    boolean labelOnly,
    String containerID,
    Integer restartCount,
    PoolVerdict verdict,
    PoolObservation observation,
    List<String> notes,
    java.time.Instant nextProbeAt,
    RejectionOutcome.Refused refusal) {

  PodAssessment {
    notes = List.copyOf(notes);
  }

  /** An assessment that rests on no rejection-probe refusal. */
  PodAssessment(
      Pod pod,
      String role,
      boolean labelOnly,
      String containerID,
      Integer restartCount,
      PoolVerdict verdict,
      PoolObservation observation,
      List<String> notes,
      java.time.Instant nextProbeAt) {
    this(
        pod,
        role,
        labelOnly,
        containerID,
        restartCount,
        verdict,
        observation,
        notes,
        nextProbeAt,
        null);
  }

  String podName() {
    return pod.getMetadata().getName();
  }

  String podUid() {
    return pod.getMetadata().getUid();
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateState;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.probe.EngineRejection;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a policy's verdict record on a pod (signed by the operator, {@code kvguard.io/verdicts}) may
 * stand in for until this operator has probed the process itself: the figures, for the very
 * container and restart, and the refusal of the same over-limit prompt as that engine's recogniser
 * counts it today. Pure.
 */
final class CarryOver {
  private CarryOver() {}

  /**
   * Whether the gate condition (written only through pods/status, with the record) shows this
   * record's verdict open: only then may the record stand in for a probe that would open the gate.
   */
  static boolean vouchedFor(VerdictRecord record, Pod pod) {
    return record != null
        && Verdict.Verified.name().equals(record.verdict())
        && Boolean.TRUE.equals(GateState.conditionOpen(pod));
  }

  static PoolObservation recordedObservation(
      VerdictRecord before, RoleSpec role, EngineProcess process) {
    if (before == null
        || before.poolTokens() == null
        || !role.getName().equals(before.role())
        || !Objects.equals(before.containerID(), process.containerID())
        || !Objects.equals(before.restartCount(), process.restartCount())
        || before.verdict() == null
        || Verdict.Unknown.name().equals(before.verdict())) {
      return null;
    }
    OptionalLong engineContext =
        before.engineContextTokens() == null
            ? OptionalLong.empty()
            : OptionalLong.of(before.engineContextTokens());
    if (!role.getEngine().exposesKvPool()) {
      // No pool was measured: the recorded bound is the context length, and must still say so.
      boolean consistent =
          engineContext.isPresent() && engineContext.getAsLong() == before.poolTokens();
      return consistent
          ? PoolObservation.contextLengthOnly(
              before.poolTokens(), before.engineVersion(), List.of())
          : null;
    }
    if (before.poolSource() != null) {
      // Recorded as an upper bound only: it must stay one, or a restart would judge it as a
      // measured pool.
      PoolObservation.PoolSource source;
      try {
        source = PoolObservation.PoolSource.valueOf(before.poolSource());
      } catch (IllegalArgumentException e) {
        return null;
      }
      if (!source.upperBound()
          || (source == PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD
              && engineContext.isEmpty())) {
        return null;
      }
      return PoolObservation.upperBound(
          before.poolTokens(),
          engineContext,
          before.engineVersion(),
          before.disaggregationMode(),
          List.of(),
          source,
          "recorded as an upper bound before the operator" + " restarted; the next probe says why");
    }
    return new PoolObservation(
        before.poolTokens(),
        engineContext,
        before.engineVersion(),
        before.disaggregationMode(),
        List.of());
  }

  /**
   * The refusal the record holds for this process and prompt, when the engine's recogniser still
   * counts it; a record without its status (older kvguard), or with one this engine's recogniser no
   * longer counts (an older kvguard took a gateway's answer for vLLM's), is no refusal: the prompt
   * is sent again.
   */
  static Optional<RejectionOutcome.Refused> recordedRefusal(
      VerdictRecord before,
      EngineProcess process,
      long promptTokens,
      PoolObservation observation,
      Optional<EngineRejection> recogniser) {
    boolean holds =
        process.containerID().equals(before.rejectionRefusedBy())
            && Objects.equals(before.restartCount(), process.restartCount())
            && Long.valueOf(promptTokens).equals(before.rejectionPromptTokens())
            && before.rejectionRefusalStatus() != null
            && before.rejectionRefusalError() != null
            && recogniser
                .filter(
                    r ->
                        r.recognises(
                            before.rejectionRefusalStatus(),
                            before.rejectionRefusalError(),
                            observation))
                .isPresent();
    return holds
        ? Optional.of(
            new RejectionOutcome.Refused(
                before.rejectionRefusalStatus(), before.rejectionRefusalError(), promptTokens))
        : Optional.empty();
  }
}

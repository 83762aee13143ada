package io.kvguard.reconciler;

import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The verdict record a pass leaves on a pod (pure), and the same facts read from a status entry.
 */
final class PodRecords {
  private PodRecords() {}

  /**
   * What this pass concluded about the pod, with the figures it rests on. The container is named
   * only once judged; a rejection-probe refusal (with the status and error class the engine
   * answered) only when the verdict rests on one; {@code lastTransitionTime} moves only when
   * verdict or reason change.
   */
  static VerdictRecord of(PodAssessment assessment, VerdictRecord before, Instant now) {
    String verdict = assessment.verdict().verdict().name();
    String reason = assessment.verdict().reason().name();
    boolean judged = assessment.verdict().verdict() != Verdict.Unknown;
    var observation = assessment.observation();
    var refusal =
        assessment.refusal() != null && assessment.verdict().verified()
            ? assessment.refusal()
            : null;
    return new VerdictRecord(
        assessment.role(),
        verdict,
        reason,
        judged ? assessment.containerID() : null,
        judged ? assessment.restartCount() : null,
        observation == null ? null : observation.poolTokens(),
        observation == null || !observation.upperBoundOnly()
            ? null
            : observation.poolSource().name(),
        observation == null || observation.engineContextTokens().isEmpty()
            ? null
            : observation.engineContextTokens().getAsLong(),
        observation == null ? null : observation.engineVersion(),
        observation == null ? null : observation.disaggregationMode(),
        refusal == null ? null : assessment.containerID(),
        refusal == null ? null : refusal.promptTokens(),
        refusal == null ? null : refusal.status(),
        refusal == null ? null : refusal.errorClass(),
        since(verdict, reason, before, now));
  }

  /**
   * A status entry's facts as a record (pods without a record: not written yet, or by an older
   * kvguard).
   */
  static VerdictRecord of(PodVerdictStatus entry) {
    return new VerdictRecord(
        entry.role,
        entry.verdict,
        entry.reason,
        entry.containerID,
        entry.restartCount,
        entry.poolTokens,
        entry.poolSource,
        entry.engineContextTokens,
        entry.engineVersion,
        entry.disaggregationMode,
        entry.rejectionRefusedBy,
        entry.rejectionPromptTokens,
        entry.rejectionRefusalStatus,
        entry.rejectionRefusalError,
        entry.lastTransitionTime);
  }

  static String since(String verdict, String reason, VerdictRecord before, Instant now) {
    boolean same =
        before != null
            && verdict.equals(before.verdict())
            && reason.equals(before.reason())
            && before.lastTransitionTime() != null;
    return same ? before.lastTransitionTime() : now.truncatedTo(ChronoUnit.SECONDS).toString();
  }
}

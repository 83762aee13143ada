package io.kvguard.gate;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What one ModelDeployment last concluded about a pod's engine process, kept on the pod itself
 * (annotation {@value GateNames#VERDICTS_ANNOTATION}, one entry per ModelDeployment) and written in
 * the same request as the gate condition, so the two never disagree. A restarted operator re-judges
 * these figures for the same container instead of shutting its gate until the first probe lands;
 * the record also marks the pod as one this policy gated, so it is handed back when the policy lets
 * go of it. On the pod, not in the ModelDeployment's status: the status must stay a bounded size at
 * any pod count (etcd refuses objects over 1.5 MiB), a pod's own record grows with nothing, and it
 * goes when the pod goes.
 *
 * @param verdict Verified, Refused or Unknown
 * @param containerID the engine container the verdict is about (absent while Unknown)
 * @param poolSource set when {@code poolTokens} is only an upper bound of the GPU pool (as in
 *     status.pods[])
 * @param rejectionRefusedBy the container that refused the rejection probe's over-limit prompt of
 *     {@code rejectionPromptTokens} tokens, with HTTP {@code rejectionRefusalStatus} and error
 *     class {@code rejectionRefusalError} (absent when none was seen)
 * @param lastTransitionTime when verdict or reason last changed (RFC 3339)
 * @param sig the operator's HMAC-SHA256 over the pod's UID, the ModelDeployment's name and this
 *     record without {@code sig} ({@link RecordSigner}); a record without a valid one is trusted
 *     for nothing
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record VerdictRecord(
    String role,
    String verdict,
    String reason,
    String containerID,
    Integer restartCount,
    Long poolTokens,
    String poolSource,
    Long engineContextTokens,
    String engineVersion,
    String disaggregationMode,
    String rejectionRefusedBy,
    Long rejectionPromptTokens,
    Integer rejectionRefusalStatus,
    String rejectionRefusalError,
    String lastTransitionTime,
    String sig) {

  /** An unsigned record (as a pass concludes it, before {@link RecordSigner#sign}). */
  public VerdictRecord(
      String role,
      String verdict,
      String reason,
      String containerID,
      Integer restartCount,
      Long poolTokens,
      String poolSource,
      Long engineContextTokens,
      String engineVersion,
      String disaggregationMode,
      String rejectionRefusedBy,
      Long rejectionPromptTokens,
      Integer rejectionRefusalStatus,
      String rejectionRefusalError,
      String lastTransitionTime) {
    this(
        role,
        verdict,
        reason,
        containerID,
        restartCount,
        poolTokens,
        poolSource,
        engineContextTokens,
        engineVersion,
        disaggregationMode,
        rejectionRefusedBy,
        rejectionPromptTokens,
        rejectionRefusalStatus,
        rejectionRefusalError,
        lastTransitionTime,
        null);
  }

  /** The same record carrying {@code signature} (null: unsigned). */
  public VerdictRecord withSig(String signature) {
    return new VerdictRecord(
        role,
        verdict,
        reason,
        containerID,
        restartCount,
        poolTokens,
        poolSource,
        engineContextTokens,
        engineVersion,
        disaggregationMode,
        rejectionRefusedBy,
        rejectionPromptTokens,
        rejectionRefusalStatus,
        rejectionRefusalError,
        lastTransitionTime,
        signature);
  }
}

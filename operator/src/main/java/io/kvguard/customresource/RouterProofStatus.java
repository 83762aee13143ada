package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Size;

/**
 * The last proof of a prefill/decode model through its router (spec.rejectionProbe.router): kept in
 * the operator's memory only, shown here to be read.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RouterProofStatus {
  /** Longest message kept: the proof's reason, never an answer's body. */
  public static final int MAX_MESSAGE = 2048;

  @JsonPropertyDescription(
      "SHA-256 (first 16 hex digits) of what the proof is for: the router Service and port,"
          + " marginTokens, the probe's timeout, the model, and each prefill/decode pod's role, container image ID, engine version"
          + " and engine container. Another value than the pods' current one means a re-proof is due.")
  @Size(max = 16)
  public String key;

  @JsonPropertyDescription(
      "Passed, Pending, RejectionPathUnsafe, RejectionProbeInconclusive or ProbeFailed.")
  @Size(max = 64)
  public String result;

  @JsonPropertyDescription("What was sent through the router and what it answered.")
  @Size(max = MAX_MESSAGE)
  public String message;

  @JsonPropertyDescription("When the proof finished (RFC 3339), absent while pending.")
  @Size(max = 64)
  public String time;
}

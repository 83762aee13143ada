package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Max;
import java.util.ArrayList;
import java.util.List;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class PodVerdictStatus {
  public String name;
  public String role;

  /** Verified, Refused or Unknown. */
  public String verdict;

  public String reason;
  public String message;

  @Max(SchemaBounds.LONG)
  public Long poolTokens;

  /**
   * Set when poolTokens is only an upper bound of the GPU pool (UPPER_BOUND,
   * UPPER_BOUND_CONTEXT_HELD or UPPER_BOUND_SHOWN, see docs/engines.md); absent when it is the pool
   * the engine reported.
   */
  public String poolSource;

  @Max(SchemaBounds.LONG)
  public Long engineContextTokens;

  public String engineVersion;
  public String disaggregationMode;

  /** The engine container that this verdict is about; a new container is probed afresh. */
  public String containerID;

  @Max(SchemaBounds.INT)
  public Integer restartCount;

  /** ReadinessGate when the pod declares kvguard.io/pool-verified, LabelOnly otherwise. */
  public String gating;

  /**
   * The engine container that refused the rejection probe's over-limit prompt (absent when not
   * run).
   */
  public String rejectionRefusedBy;

  /** Size of that prompt, in tokens. */
  @Max(SchemaBounds.LONG)
  public Long rejectionPromptTokens;

  /** The HTTP status the engine refused that prompt with (absent when no refusal was seen). */
  @Max(SchemaBounds.INT)
  public Integer rejectionRefusalStatus;

  /**
   * The engine's error class for that refusal (e.g. validation, exceed_context_size_error), in
   * kvguard's words.
   */
  public String rejectionRefusalError;

  /** When verdict or reason last changed (RFC 3339). */
  public String lastTransitionTime;

  public List<String> notes = new ArrayList<>();
}

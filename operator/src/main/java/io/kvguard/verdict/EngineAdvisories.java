package io.kvguard.verdict;

import java.util.List;
import java.util.Objects;

/**
 * Engine builds known to be unsafe, as data: one line per advisory. An advisory refuses a pod whose engine
 * matches, whose version is a release older than {@code fixedIn}, and whose disaggregation mode meets the
 * condition. A pod whose version is unknown cannot be cleared of a matching advisory (see {@link PoolJudge}).
 * Advisories are on by default; {@code spec.engineAdvisories: Disabled} turns them off per ModelDeployment.
 */
public final class EngineAdvisories {

  /** Which disaggregation modes an advisory concerns. */
  public enum Disaggregation {
    /** Every mode. */
    ANY,
    /** Prefill or decode, or any mode other than unified the engine reports (an unrecognised one included). */
    PREFILL_OR_DECODE,
    /** Unified serving only (the engine reports no disaggregation mode). */
    UNIFIED;

    boolean matches(String mode) {
      return switch (this) {
        case ANY -> true;
        case PREFILL_OR_DECODE -> mode != null;
        case UNIFIED -> mode == null;
      };
    }
  }

  /**
   * @param engine the engine's wire name, as in {@code spec.roles[].engine}
   * @param fixedIn the first release without the flaw; older releases are refused
   * @param when the disaggregation modes affected
   * @param reason the reason the refusal carries
   * @param message what is wrong and what to do, shown on the pod condition
   */
  public record Advisory(String engine, EngineVersion fixedIn, Disaggregation when, GateReason reason, String message) {
    public Advisory {
      Objects.requireNonNull(engine, "engine");
      Objects.requireNonNull(when, "when");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(message, "message");
      if (!fixedIn.isRelease()) {
        throw new IllegalArgumentException("fixedIn must be a release version, was " + fixedIn);
      }
    }

    /** The advisory is about this engine in this mode; whether the version is affected is a separate question. */
    public boolean concerns(String engineName, String disaggregationMode) {
      return engine.equals(engineName) && when.matches(disaggregationMode);
    }
  }

  /** The built-in advisories. Adding one is adding a line. */
  public static final List<Advisory> BUILT_IN = List.of(
      new Advisory("sglang", EngineVersion.release("0.5.22"), Disaggregation.PREFILL_OR_DECODE, GateReason.KnownUnsafeEngine,
          "SGLang before 0.5.22 with prefill/decode disaggregation mishandles over-long prompts: its abort swaps the"
              + " prompt for a one-token placeholder and stores the error in to_finish while finished_reason stays"
              + " empty, so the request runs on and decode reads KV pages still holding other requests' data (HTTP 200)."
              + " Run SGLang 0.5.22 or later"));

  private EngineAdvisories() {}
}

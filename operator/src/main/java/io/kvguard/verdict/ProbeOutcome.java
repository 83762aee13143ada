package io.kvguard.verdict;

/** Either the engine's figures or why they could not be had. */
public sealed interface ProbeOutcome {

  /** The engine answered with figures that passed every sanity check. */
  record Observed(PoolObservation observation) implements ProbeOutcome {}

  /**
   * The probe could not establish the figures; {@code cause} is safe to show (no engine payload).
   */
  record Failed(String cause) implements ProbeOutcome {}

  static ProbeOutcome observed(PoolObservation observation) {
    return new Observed(observation);
  }

  static ProbeOutcome failed(String cause) {
    return new Failed(cause);
  }
}

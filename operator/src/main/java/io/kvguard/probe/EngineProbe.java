package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import io.kvguard.verdict.ProbeOutcome;

/**
 * Reads one engine process's real KV pool and context length from the engine itself. Each engine's
 * class says how it reads ({@link #read}); how a reading that cannot establish the figures becomes
 * a failed outcome is stated here once ({@link #probe}).
 */
public interface EngineProbe {

  Engine engine();

  /**
   * Never throws: every failure is a {@link ProbeOutcome.Failed} whose message is the {@link
   * ProbeException}'s (shown to users; it never quotes the engine). Not meant to be overridden:
   * engines implement {@link #read}.
   */
  default ProbeOutcome probe(EngineEndpoint endpoint) {
    try {
      return read(endpoint);
    } catch (ProbeException e) {
      return ProbeOutcome.failed(e.getMessage());
    } catch (RuntimeException e) {
      // A defect in a read, not the engine's answer: a failed probe in the operator and in check
      // alike (check would otherwise die with exit 1, "refused"); only the class is named, a
      // message might quote the engine.
      return ProbeOutcome.failed(unexpected(e));
    }
  }

  /** How a probe that threw is reported, by the operator's scheduler and here. */
  static String unexpected(RuntimeException e) {
    return "probe error (" + e.getClass().getSimpleName() + ")";
  }

  /**
   * The engine's figures as this engine reports them.
   *
   * @throws ProbeException when the answers cannot establish them (unreachable, an HTTP error, an
   *     unknown shape)
   */
  ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException;

  /**
   * What this engine does with an over-long prompt, where kvguard knows it from the engine's
   * source.
   */
  default java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.empty();
  }
}

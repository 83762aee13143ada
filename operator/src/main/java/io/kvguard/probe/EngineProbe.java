package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import io.kvguard.verdict.ProbeOutcome;

/** Reads one engine process's real KV pool and context length from the engine itself. */
public interface EngineProbe {

  Engine engine();

  /** Never throws: every failure is a {@link ProbeOutcome.Failed} naming its cause. */
  ProbeOutcome probe(EngineEndpoint endpoint);

  /** What this engine does with an over-long prompt, where kvguard knows it from the engine's source. */
  default java.util.Optional<EngineRejection> rejection() {
    return java.util.Optional.empty();
  }
}

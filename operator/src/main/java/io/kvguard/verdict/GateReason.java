package io.kvguard.verdict;

/**
 * Reasons on the pod condition kvguard.io/pool-verified and in the ModelDeployment status; public
 * API.
 *
 * <p>When several rules fail, the verdict's reason is the first in this precedence, and its message
 * lists every failure: PoolTooSmall, EngineContextTooShort, EngineContextExceedsPool,
 * KnownUnsafeEngine, EngineVersionTooOld, EngineVersionUnknown. Capacity comes first because it is
 * what the window promises.
 */
public enum GateReason {
  /** Verified: the measured KV pool holds the window (and every other rule passed). */
  PoolSufficient,
  /** Verified from the context length alone: the engine exposes no KV pool (Ollama). */
  ContextLengthSufficient,
  PoolTooSmall,
  EngineContextTooShort,
  EngineContextExceedsPool,
  /**
   * An advisory of {@link EngineAdvisories} matches the engine, its version and its disaggregation
   * mode; for an advisory whose fixed release is named by a post-mortem alone, also a pod at or
   * after that release or of unknown version, which its version cannot clear (the message says what
   * measures it instead).
   */
  KnownUnsafeEngine,
  /** The engine's release version is older than the role's minEngineVersion. */
  EngineVersionTooOld,
  /**
   * A version rule applies but the engine's version is absent or not a release, and the role does
   * not allow that.
   */
  EngineVersionUnknown,
  ProbeFailed,
  AwaitingProbe,
  Audit,
  PolicyRemoved,
  /**
   * Shut: the pod's labels (or the policy's selector) changed so that a ModelDeployment which still
   * exists no longer selects it, and no other policy does. The pod was not proven under any policy,
   * so its gate stays False until a policy selects and verifies it again; only a deleted
   * ModelDeployment hands its pods back open.
   */
  NoLongerSelected,
  RejectionPathUnsafe,
  /**
   * The rejection probe proved nothing: the answer was not the engine's own admission refusal (a
   * proxy's or an HTTP layer's 4xx, an unrecognised body), or the prompt could not reach the
   * engine's rejection path from where it was sent. The gate stays shut; the message names what to
   * change.
   */
  RejectionProbeInconclusive,
  /**
   * Inconclusive: the engine exports only an upper bound of its GPU pool (TensorRT-LLM's block
   * counts include host-offload blocks and add up the pools of several attention windows; vLLM's
   * num_gpu_blocks × block_size over-reports hybrid models), the bound is large enough, and nothing
   * the engine reports shows the GPU pool itself is. The message says why and what the engine's
   * operator can change or declare.
   */
  PoolUpperBoundOnly
}

package io.kvguard.verdict;

/** Reasons on the pod condition kvguard.io/pool-verified and in the ModelDeployment status; public API. */
public enum GateReason {
  PoolSufficient,
  PoolTooSmall,
  EngineContextTooShort,
  EngineContextExceedsPool,
  ProbeFailed,
  AwaitingProbe,
  Audit,
  PolicyRemoved,
  RejectionPathUnsafe
}

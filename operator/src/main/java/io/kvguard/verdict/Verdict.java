package io.kvguard.verdict;

/** The outcome of judging one engine process. */
public enum Verdict {
  /** Every rule passed for the engine's current container. */
  Verified,
  /** The engine answered, and what it answered breaks a rule. */
  Refused,
  /** Nothing trustworthy is known yet (probe failed or not yet run). The gate stays shut. */
  Unknown
}

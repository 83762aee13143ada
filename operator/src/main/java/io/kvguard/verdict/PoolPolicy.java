package io.kvguard.verdict;

import java.util.Objects;

/**
 * The promise a role's pods must keep.
 *
 * @param contextWindow tokens advertised to clients
 * @param minPoolRatio the pool must be at least contextWindow x this (>= 1.0)
 * @param allowEngineContextAbovePool the role's explicit opt-out of the incident's root-cause rule
 * @param versions the engine-version rules: minimum version, unknown versions, advisories
 * @param blockCountIsPool the role's explicit declaration that the engine's exported block count is
 *     its GPU pool (no host offload, one attention window, one KV-cache group): an upper-bound
 *     figure is then judged as the pool, unless the engine's own answer shows otherwise
 */
public record PoolPolicy(
    long contextWindow,
    double minPoolRatio,
    boolean allowEngineContextAbovePool,
    VersionRules versions,
    boolean blockCountIsPool) {

  public PoolPolicy {
    if (contextWindow < 1) {
      throw new IllegalArgumentException("contextWindow must be >= 1, was " + contextWindow);
    }
    if (!(minPoolRatio >= 1.0) || Double.isInfinite(minPoolRatio)) {
      throw new IllegalArgumentException(
          "minPoolRatio must be a finite number >= 1.0, was " + minPoolRatio);
    }
    Objects.requireNonNull(versions, "versions");
  }

  /** A policy without the block-count declaration. */
  public PoolPolicy(
      long contextWindow,
      double minPoolRatio,
      boolean allowEngineContextAbovePool,
      VersionRules versions) {
    this(contextWindow, minPoolRatio, allowEngineContextAbovePool, versions, false);
  }

  /**
   * The same promise, judged before a rejection probe through the prefill/decode router ({@link
   * VersionRules#decidedByRouterProbe}).
   */
  public PoolPolicy decidedByRouterProbe() {
    return new PoolPolicy(
        contextWindow,
        minPoolRatio,
        allowEngineContextAbovePool,
        versions.decidedByRouterProbe(),
        blockCountIsPool);
  }

  /**
   * A policy with capacity rules only, no version rule (for judging figures whose engine is not
   * known).
   */
  public PoolPolicy(long contextWindow, double minPoolRatio, boolean allowEngineContextAbovePool) {
    this(contextWindow, minPoolRatio, allowEngineContextAbovePool, VersionRules.NONE);
  }
}

package io.kvguard.verdict;

import java.util.Objects;

/**
 * The promise a role's pods must keep.
 *
 * @param contextWindow tokens advertised to clients
 * @param minPoolRatio the pool must be at least contextWindow x this (>= 1.0)
 * @param allowEngineContextAbovePool the role's explicit opt-out of the incident's root-cause rule
 * @param versions the engine-version rules: minimum version, unknown versions, advisories
 */
public record PoolPolicy(long contextWindow, double minPoolRatio, boolean allowEngineContextAbovePool, VersionRules versions) {

  public PoolPolicy {
    if (contextWindow < 1) {
      throw new IllegalArgumentException("contextWindow must be >= 1, was " + contextWindow);
    }
    if (!(minPoolRatio >= 1.0) || Double.isInfinite(minPoolRatio)) {
      throw new IllegalArgumentException("minPoolRatio must be a finite number >= 1.0, was " + minPoolRatio);
    }
    Objects.requireNonNull(versions, "versions");
  }

  /** A policy with capacity rules only, no version rule (for judging figures whose engine is not known). */
  public PoolPolicy(long contextWindow, double minPoolRatio, boolean allowEngineContextAbovePool) {
    this(contextWindow, minPoolRatio, allowEngineContextAbovePool, VersionRules.NONE);
  }
}

package io.kvguard.verdict;

/**
 * The promise a role's pods must keep.
 *
 * @param contextWindow tokens advertised to clients
 * @param minPoolRatio the pool must be at least contextWindow x this (>= 1.0)
 * @param allowEngineContextAbovePool the role's explicit opt-out of the incident's root-cause rule
 */
public record PoolPolicy(long contextWindow, double minPoolRatio, boolean allowEngineContextAbovePool) {

  public PoolPolicy {
    if (contextWindow < 1) {
      throw new IllegalArgumentException("contextWindow must be >= 1, was " + contextWindow);
    }
    if (!(minPoolRatio >= 1.0) || Double.isInfinite(minPoolRatio)) {
      throw new IllegalArgumentException("minPoolRatio must be a finite number >= 1.0, was " + minPoolRatio);
    }
  }
}

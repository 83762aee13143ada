package io.kvguard.verdict;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What one engine process revealed about itself.
 *
 * @param poolTokens the smallest KV pool over all of the pod's ranks, in tokens; with
 *     {@link PoolSource#CONTEXT_LENGTH_ONLY} the engine exposes no pool and this is its context length, the
 *     only bound it reports
 * @param engineContextTokens the longest prompt the engine itself admits, when it reports one
 * @param engineVersion the engine's version string, sanitised, or null
 * @param disaggregationMode prefill, decode or null (unified), where the engine reports it
 * @param notes facts about how the figures were obtained that a user should see (e.g. "rank 0 only")
 * @param poolSource whether {@code poolTokens} is a KV pool the engine reported
 */
public record PoolObservation(
    long poolTokens,
    OptionalLong engineContextTokens,
    String engineVersion,
    String disaggregationMode,
    List<String> notes,
    PoolSource poolSource) {

  /** Where {@code poolTokens} comes from. */
  public enum PoolSource {
    /** The engine reported the KV pool it allocated. */
    ENGINE_KV_POOL,
    /**
     * The engine exposes no pool; its context length stands in as the bound and must equal
     * {@code engineContextTokens}. The verdict says so.
     */
    CONTEXT_LENGTH_ONLY
  }

  public PoolObservation {
    Objects.requireNonNull(engineContextTokens, "engineContextTokens");
    Objects.requireNonNull(poolSource, "poolSource");
    notes = List.copyOf(notes);
    if (poolSource == PoolSource.CONTEXT_LENGTH_ONLY
        && (engineContextTokens.isEmpty() || engineContextTokens.getAsLong() != poolTokens)) {
      throw new IllegalArgumentException("a context-length-only observation carries the context length as its bound");
    }
  }

  /** An observation of a KV pool the engine reported. */
  public PoolObservation(long poolTokens, OptionalLong engineContextTokens, String engineVersion,
      String disaggregationMode, List<String> notes) {
    this(poolTokens, engineContextTokens, engineVersion, disaggregationMode, notes, PoolSource.ENGINE_KV_POOL);
  }

  /** An engine that exposes no pool: its context length is the only bound (Ollama). */
  public static PoolObservation contextLengthOnly(long contextTokens, String engineVersion, List<String> notes) {
    return new PoolObservation(contextTokens, OptionalLong.of(contextTokens), engineVersion, null, notes,
        PoolSource.CONTEXT_LENGTH_ONLY);
  }

  public boolean poolExposed() {
    return poolSource == PoolSource.ENGINE_KV_POOL;
  }
}

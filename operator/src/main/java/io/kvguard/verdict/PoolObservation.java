package io.kvguard.verdict;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What one engine process revealed about itself.
 *
 * @param poolTokens the smallest KV pool over all of the pod's ranks, in tokens; with {@link
 *     PoolSource#CONTEXT_LENGTH_ONLY} the engine exposes no pool and this is its context length,
 *     the only bound it reports
 * @param engineContextTokens the longest prompt the engine itself admits, when it reports one
 * @param engineVersion the engine's version string, sanitised, or null
 * @param disaggregationMode prefill, decode or null (unified), where the engine reports it
 * @param notes facts about how the figures were obtained that a user should see (e.g. "rank 0
 *     only")
 * @param poolSource whether {@code poolTokens} is a KV pool the engine reported, its context
 *     length, or only an upper bound of its GPU pool
 * @param boundCaveat with an upper bound: why the figure may exceed the GPU pool and what the
 *     engine's operator can change or declare (shown in the verdict); null otherwise
 * @param engineInputTokens the input limit an engine checks apart from its context length, where it
 *     reports one (TGI's {@code /info} {@code max_input_tokens}); empty otherwise
 */
public record PoolObservation(
    long poolTokens,
    OptionalLong engineContextTokens,
    String engineVersion,
    String disaggregationMode,
    List<String> notes,
    PoolSource poolSource,
    String boundCaveat,
    OptionalLong engineInputTokens) {

  /** Where {@code poolTokens} comes from. */
  public enum PoolSource {
    /** The engine reported the KV pool it allocated. */
    ENGINE_KV_POOL,
    /**
     * The engine exposes no pool; its context length stands in as the bound and must equal {@code
     * engineContextTokens}. The verdict says so.
     */
    CONTEXT_LENGTH_ONLY,
    /**
     * The engine's figure may count KV blocks a prompt cannot use on the GPU (host-offload blocks,
     * the pools of several attention windows added up, the KV-cache groups of a hybrid model): the
     * GPU pool is at most this. It refuses a pod whose bound is too small, and verifies nothing
     * unless the role declares the figure exact.
     */
    UPPER_BOUND,
    /**
     * An upper bound, from an engine that refuses to start unless one request of its full context
     * length fits its KV cache (vLLM): the context length is then a lower bound of the pool, and
     * may verify on its own.
     */
    UPPER_BOUND_CONTEXT_HELD,
    /**
     * An upper bound that the engine's own answer shows is more than the GPU pool (it lists several
     * attention windows, or host-offload blocks, without a GPU-only count that applies): no
     * declaration lifts it.
     */
    UPPER_BOUND_SHOWN;

    /** True for the sources whose figure is only an upper bound of the GPU pool. */
    public boolean upperBound() {
      return this == UPPER_BOUND || this == UPPER_BOUND_CONTEXT_HELD || this == UPPER_BOUND_SHOWN;
    }
  }

  /**
   * Notes that begin so qualify the figure itself (what it is only as good as); the verdict message
   * repeats them.
   */
  public static final String FIGURE_CAVEAT = "figure caveat: ";

  public PoolObservation {
    Objects.requireNonNull(engineContextTokens, "engineContextTokens");
    Objects.requireNonNull(engineInputTokens, "engineInputTokens");
    Objects.requireNonNull(poolSource, "poolSource");
    notes = List.copyOf(notes);
    if (poolSource.upperBound() != (boundCaveat != null)) {
      throw new IllegalArgumentException(
          "an upper bound, and only an upper bound, carries a caveat");
    }
    if (poolSource == PoolSource.UPPER_BOUND_CONTEXT_HELD && engineContextTokens.isEmpty()) {
      throw new IllegalArgumentException(
          "a context-held upper bound needs the engine's context length");
    }
    if (poolSource == PoolSource.CONTEXT_LENGTH_ONLY
        && (engineContextTokens.isEmpty() || engineContextTokens.getAsLong() != poolTokens)) {
      throw new IllegalArgumentException(
          "a context-length-only observation carries the context length as its bound");
    }
  }

  /** An observation without a separate input limit. */
  public PoolObservation(
      long poolTokens,
      OptionalLong engineContextTokens,
      String engineVersion,
      String disaggregationMode,
      List<String> notes,
      PoolSource poolSource,
      String boundCaveat) {
    this(
        poolTokens,
        engineContextTokens,
        engineVersion,
        disaggregationMode,
        notes,
        poolSource,
        boundCaveat,
        OptionalLong.empty());
  }

  /** The same observation, with the engine's separate input limit. */
  public PoolObservation withEngineInputTokens(long inputTokens) {
    return new PoolObservation(
        poolTokens,
        engineContextTokens,
        engineVersion,
        disaggregationMode,
        notes,
        poolSource,
        boundCaveat,
        OptionalLong.of(inputTokens));
  }

  /** An observation of a KV pool the engine reported. */
  public PoolObservation(
      long poolTokens,
      OptionalLong engineContextTokens,
      String engineVersion,
      String disaggregationMode,
      List<String> notes) {
    this(
        poolTokens,
        engineContextTokens,
        engineVersion,
        disaggregationMode,
        notes,
        PoolSource.ENGINE_KV_POOL,
        null);
  }

  /** An engine figure that is only an upper bound of the GPU pool, of the given kind, and why. */
  public static PoolObservation upperBound(
      long boundTokens,
      OptionalLong engineContextTokens,
      String engineVersion,
      String disaggregationMode,
      List<String> notes,
      PoolSource kind,
      String caveat) {
    if (!kind.upperBound()) {
      throw new IllegalArgumentException(kind + " is not an upper bound");
    }
    return new PoolObservation(
        boundTokens, engineContextTokens, engineVersion, disaggregationMode, notes, kind, caveat);
  }

  /** An engine that exposes no pool: its context length is the only bound (Ollama). */
  public static PoolObservation contextLengthOnly(
      long contextTokens, String engineVersion, List<String> notes) {
    return new PoolObservation(
        contextTokens,
        OptionalLong.of(contextTokens),
        engineVersion,
        null,
        notes,
        PoolSource.CONTEXT_LENGTH_ONLY,
        null);
  }

  /**
   * True when {@code poolTokens} is a pool the engine reported, or at least an upper bound of one.
   */
  public boolean poolExposed() {
    return poolSource != PoolSource.CONTEXT_LENGTH_ONLY;
  }

  /** The notes that qualify the figure itself ({@link #FIGURE_CAVEAT}), for the verdict message. */
  public List<String> figureCaveats() {
    return notes.stream().filter(note -> note.startsWith(FIGURE_CAVEAT)).toList();
  }

  /** True when {@code poolTokens} is only an upper bound of the GPU pool. */
  public boolean upperBoundOnly() {
    return poolSource.upperBound();
  }
}

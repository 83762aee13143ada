package io.kvguard.testkit;

import io.kvguard.testkit.FakeEngine.Answer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a fake engine process claims about itself: engine shape, KV pool per data-parallel rank, its
 * own context length, disaggregation mode and version. The embedded scenarios serve {@link
 * #answers()} from a {@code FakeEngine}; the real-cluster scenarios pass {@link #toArgs()} to the
 * {@code fake-engine} image.
 *
 * @param shape sglang or vllm
 * @param poolPerRank KV pool of every rank, in tokens
 * @param ranks data-parallel ranks (SGLang internal_states entries, vLLM engines)
 * @param engineContext the engine's own context length (max_model_len)
 * @param mode prefill, decode or null (unified)
 */
public record FakeEngineOptions(
    String shape, long poolPerRank, int ranks, long engineContext, String mode, String version) {
  public static final Set<String> SHAPES = Set.of("sglang", "vllm");
  public static final Set<String> VALUED =
      Set.of("shape", "pool", "ranks", "context-length", "mode", "version");

  public FakeEngineOptions {
    if (!SHAPES.contains(shape)) {
      throw new IllegalArgumentException("shape must be one of " + SHAPES + ", was " + shape);
    }
    if (poolPerRank < 1 || ranks < 1 || engineContext < 1) {
      throw new IllegalArgumentException("pool, ranks and context length must be positive");
    }
  }

  public static FakeEngineOptions sglang(
      long poolPerRank, int ranks, long engineContext, String mode) {
    return new FakeEngineOptions("sglang", poolPerRank, ranks, engineContext, mode, "0.5.22");
  }

  /**
   * The same engine restarted with another pool (new GPU memory fraction, parallelism, GPUs...).
   */
  public FakeEngineOptions withPool(long pool) {
    return new FakeEngineOptions(shape, pool, ranks, engineContext, mode, version);
  }

  /** Every path the engine answers, in the real engine's shape (see docs on engine shapes). */
  public Map<String, Answer> answers() {
    long[] pools = new long[ranks];
    Arrays.fill(pools, poolPerRank);
    if (shape.equals("sglang")) {
      return EngineShapes.sglang(engineContext, mode, version, pools);
    }
    Long[] perEngine = Arrays.stream(pools).boxed().toArray(Long[]::new);
    // vLLM sums num_gpu_blocks over its data-parallel engines; kv_cache_size_tokens is per engine.
    long blockSize = 16;
    return EngineShapes.vllm(engineContext, poolPerRank * ranks / blockSize, blockSize, perEngine);
  }

  /** The {@code fake-engine} command-line flags that reproduce these options. */
  public List<String> toArgs() {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--shape",
                shape,
                "--pool",
                Long.toString(poolPerRank),
                "--ranks",
                Integer.toString(ranks),
                "--context-length",
                Long.toString(engineContext),
                "--version",
                version));
    if (mode != null) {
      args.addAll(List.of("--mode", mode));
    }
    return args;
  }
}

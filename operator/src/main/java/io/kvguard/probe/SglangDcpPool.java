package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.EngineVersion;
import java.util.List;
import java.util.OptionalLong;

/**
 * SGLang's pool as its scheduler admits a prompt under decode context parallelism ({@code
 * --dcp-size}), read in sgl-project/sglang (through the fork bytedance-iaas/sglang) at tags v0.5.15
 * to v0.5.18.
 *
 * <ul>
 *   <li>{@code dcp_size} is a flat {@code ServerArgs} field from v0.5.15 ({@code server_args.py},
 *       default 1, refused below 1 by {@code _handle_dcp_validation}); {@code /server_info} dumps
 *       every server argument ({@code dataclasses.asdict(server_args)}, {@code http_server.py}), so
 *       a Python server of 0.5.15 or later always reports it. {@code attn_dcp_size} is its runtime
 *       copy ({@code scheduler.py}, {@code runtime_context.py}) and is not served.
 *   <li>Each rank's {@code memory_usage.token_capacity} stays its own {@code max_total_num_tokens}
 *       ({@code scheduler.py} at v0.5.18), while the token allocator spans {@code
 *       max_total_num_tokens × attn_dcp_size} ({@code mem_cache/kv_cache_configurator.py}).
 *   <li>From v0.5.17 the scheduler's limit is {@code min(context − 1, pool × dcp − 1) − 5} ({@code
 *       managers/tp_worker.py} {@code get_worker_info}, v0.5.18 lines 525-537); at v0.5.15 and
 *       v0.5.16 it is {@code min(context − 1, pool − 1) − 5}, the per-rank pool alone.
 * </ul>
 *
 * So the pool a prompt is admitted against is the per-rank figure × dcp_size from 0.5.17 on, and
 * the per-rank figure before. For a version that is not a release the formula is unknown, and the
 * per-rank figure (never more than either) is judged.
 */
final class SglangDcpPool {
  /** The first release whose {@code /server_info} carries {@code dcp_size}. */
  static final EngineVersion DCP_ARGUMENT = EngineVersion.release("0.5.15");

  /** The first release whose scheduler admits against the pool × {@code attn_dcp_size}. */
  static final EngineVersion DCP_ADMISSION = EngineVersion.release("0.5.17");

  private SglangDcpPool() {}

  /**
   * SGLang cuts each tensor-parallel group into decode-context-parallel groups of {@code dcp_size}
   * consecutive ranks and asserts each holds {@code dcp_size} of them ({@code
   * distributed/parallel_state.py} {@code initialize_model_parallel}, v0.5.18): an engine whose
   * {@code dcp_size} exceeds or does not divide {@code tp_size} does not start. Such an answer
   * comes from no SGLang, and multiplying the pool by it would open the gate on a made-up figure.
   */
  private static void requireDividesTp(long dcpSize, JsonNode info) throws ProbeException {
    OptionalLong tp = StrictJson.optionalTokens(info, "tp_size", "server_info");
    if (tp.isEmpty()) {
      throw new ProbeException(
          "server_info reports dcp_size "
              + dcpSize
              + " but no tp_size, which SGLang reports with every server argument: the"
              + " decode-context-parallel size cannot be checked against the tensor-parallel size");
    }
    if (tp.getAsLong() % dcpSize != 0) {
      throw new ProbeException(
          "server_info dcp_size "
              + dcpSize
              + " does not divide tp_size "
              + tp.getAsLong()
              + ": SGLang does not start so (each tensor-parallel group is cut into groups of"
              + " dcp_size ranks), so the answer is no SGLang's and its pool is not multiplied");
    }
  }

  /**
   * The pool the scheduler admits against, from the smallest per-rank figure.
   *
   * @param version the engine's reported version, or null
   */
  static long admitted(long perRank, JsonNode info, String version, List<String> notes)
      throws ProbeException {
    EngineVersion parsed = version == null ? null : EngineVersion.parse(version);
    boolean release = parsed != null && parsed.isRelease();
    OptionalLong dcp = StrictJson.optionalTokens(info, "dcp_size", "server_info");
    if (dcp.isEmpty()) {
      if (release && parsed.isOlderThan(DCP_ARGUMENT)) {
        return perRank;
      }
      throw new ProbeException(
          "server_info reports no dcp_size, which SGLang "
              + DCP_ARGUMENT
              + " and later report with every"
              + " server argument (engine version "
              + (version == null ? "not reported" : version)
              + "): the decode-context-parallel size, which"
              + " the scheduler multiplies the pool by, is unknown");
    }
    long size = dcp.getAsLong();
    if (size == 1) {
      return perRank;
    }
    if (!release || parsed.isOlderThan(DCP_ADMISSION)) {
      notes.add(
          "dcp_size "
              + size
              + ": pool judged per rank ("
              + perRank
              + " tokens), as SGLang before "
              + DCP_ADMISSION
              + " admits"
              + (release
                  ? ""
                  : "; the engine version is not a release, and per rank is never more"));
      return perRank;
    }
    requireDividesTp(size, info);
    long admitted;
    try {
      admitted = Math.multiplyExact(perRank, size);
    } catch (ArithmeticException e) {
      throw new ProbeException(
          "server_info token_capacity " + perRank + " × dcp_size " + size + " overflows");
    }
    notes.add(
        "pool = per-rank token_capacity "
            + perRank
            + " × dcp_size "
            + size
            + ": SGLang "
            + DCP_ADMISSION
            + " and later admit against the pool × attn_dcp_size");
    return admitted;
  }
}

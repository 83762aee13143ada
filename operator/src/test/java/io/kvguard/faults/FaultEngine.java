package io.kvguard.faults;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import java.util.Map;
import java.util.Optional;

/**
 * One engine as the fault table sees it: how to build its probe, its healthy answers, the path that
 * carries its pool, and how each content fault looks in its own answer format. A new engine joins
 * the table by implementing this once; every transport fault then applies to it unchanged.
 */
interface FaultEngine {

  /** The ways an answer's figures can be wrong, independent of the format that carries them. */
  enum ContentFault {
    WRONG_JSON_TYPE,
    MISSING_POOL,
    NULL_POOL,
    ZERO_POOL,
    NEGATIVE_POOL,
    FRACTIONAL_POOL,
    POOL_PAST_2_63,
    NAN,
    POSITIVE_INFINITY,
    NEGATIVE_INFINITY,
    DUPLICATE_SERIES_DISAGREE,
    RANK_MISSING_CAPACITY,
    TRUNCATED_CONTENT,
    NO_MODELS,
    RANKS_DISAGREE_WITH_COUNT,
    RANK_ZERO_ONLY
  }

  /** Answers that replace the healthy ones, and a fragment the failure message must contain. */
  record Fault(Map<String, RawEngine.Behaviour> routes, String cause) {}

  String name();

  EngineProbe probe(EngineHttp http);

  /** Answers that a probe verifies for the table's policy (pool and engine context both fit). */
  Map<String, RawEngine.Behaviour> healthy();

  /** The path whose answer holds the pool. */
  String poolPath();

  String poolContentType();

  /** The healthy body of {@link #poolPath()}. */
  byte[] poolBody();

  /** A content type this engine's pool answer must not be accepted with. */
  String wrongContentType();

  /**
   * The path whose answer holds the engine's context length, when it is not {@link #poolPath()};
   * empty when the engine reports none or reports it next to the pool. Rows that break this path
   * skip engines without one.
   */
  default Optional<String> contextPath() {
    return Optional.empty();
  }

  /**
   * Whether the healthy answer verifies only with the role's blockCountIsPool declaration: Triton's
   * block count is an upper bound of the GPU pool (host offload and several attention windows are
   * counted), never a pool by itself.
   */
  default boolean needsBlockCountDeclaration() {
    return false;
  }

  /** Empty when the fault cannot be expressed in this engine's answers. */
  Optional<Fault> content(ContentFault fault);
}

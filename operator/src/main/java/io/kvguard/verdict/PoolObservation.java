package io.kvguard.verdict;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What one engine process revealed about itself.
 *
 * @param poolTokens the smallest KV pool over all of the pod's ranks, in tokens
 * @param engineContextTokens the longest prompt the engine itself admits, when it reports one
 * @param engineVersion the engine's version string, sanitised, or null
 * @param disaggregationMode prefill, decode or null (unified), where the engine reports it
 * @param notes facts about how the figures were obtained that a user should see (e.g. "rank 0 only")
 */
public record PoolObservation(
    long poolTokens,
    OptionalLong engineContextTokens,
    String engineVersion,
    String disaggregationMode,
    List<String> notes) {

  public PoolObservation {
    Objects.requireNonNull(engineContextTokens, "engineContextTokens");
    notes = List.copyOf(notes);
  }
}

package io.kvguard.verdict;

import java.util.Objects;
import java.util.Set;

/**
 * One prompt of the rejection probe: the admission check (path) it must reach, its exact length in
 * tokens, and the refusals that count for that check.
 *
 * @param check the admission check in the engine's own terms, as messages name it (e.g. "S4
 *     scheduler validate_input_length")
 * @param tokens the prompt's exact length in token IDs
 * @param refusals the error classes (as the engine's recogniser names them) that are this check's
 *     own refusal; empty means any refusal the engine's recogniser knows (engines whose paths are
 *     not told apart yet)
 * @param why why this length reaches this check and no other, for the docs and the verdict
 * @param statedLimits the limits the refusing check may state in its sentence (through a
 *     prefill/decode router: the max_req_input_len each worker reported), so that a refusal by a
 *     check whose figures did not size the prompt does not count; empty means any limit the prompt
 *     reaches
 */
public record ProbePrompt(
    String check, long tokens, Set<String> refusals, String why, Set<Long> statedLimits) {
  public ProbePrompt {
    Objects.requireNonNull(check, "check");
    Objects.requireNonNull(why, "why");
    refusals = Set.copyOf(refusals);
    statedLimits = Set.copyOf(statedLimits);
    if (tokens < 1) {
      throw new IllegalArgumentException("a probe prompt has at least one token, was " + tokens);
    }
  }

  public ProbePrompt(String check, long tokens, Set<String> refusals, String why) {
    this(check, tokens, refusals, why, Set.of());
  }

  /** The single prompt of an engine whose admission paths kvguard does not tell apart. */
  public static ProbePrompt anyRefusal(long tokens) {
    return new ProbePrompt(
        "admission limit", tokens, Set.of(), "just above the engine's admission limit");
  }

  /** Whether a refusal of this error class is this check's own. */
  public boolean refusedBy(String errorClass) {
    return refusals.isEmpty() || refusals.contains(errorClass);
  }
}

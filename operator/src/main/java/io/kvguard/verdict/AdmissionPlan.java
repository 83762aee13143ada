package io.kvguard.verdict;

import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongFunction;

/**
 * The prompts the rejection probe sends to one engine process, one per admission path an over-long
 * prompt can take, or why no prompt can prove anything there.
 */
public sealed interface AdmissionPlan {

  /**
   * Send these, in order; the gate opens only when each is refused with its own check's refusal.
   */
  record Prompts(List<ProbePrompt> prompts) implements AdmissionPlan {
    public Prompts {
      prompts = List.copyOf(prompts);
      if (prompts.isEmpty()) {
        throw new IllegalArgumentException("a plan sends at least one prompt");
      }
    }
  }

  /**
   * Nothing is sent: the paths cannot be computed, or refusals would prove nothing. {@code reason}
   * is safe to show and says what to change.
   */
  record Unprovable(String reason) implements AdmissionPlan {}

  /**
   * The plan {@code sized} makes from a limit the engine reports, or {@link Unprovable} with {@code
   * unreported} when it reports none: an engine's paths are sized from its own figures or not at
   * all.
   */
  static AdmissionPlan sizedBy(
      OptionalLong limit, String unreported, LongFunction<AdmissionPlan> sized) {
    return limit.isEmpty() ? new Unprovable(unreported) : sized.apply(limit.getAsLong());
  }
}

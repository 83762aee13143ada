package io.kvguard.verdict;

import java.util.List;

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
}

package io.kvguard.probe;

import io.kvguard.verdict.SglangAdmission;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SGLang's three length refusals of a token-ID prompt, each matched whole (the same words from
 * v0.4.6.post5 to v0.5.18, read through the fork bytedance-iaas/sglang), with the numbers each one
 * states checked against what kvguard sent and what the pod reported. A refusal whose numbers are
 * another engine's (a proxy that reports a larger context than the engine's, so that the band the
 * scheduler refuses looks empty and is never probed) or nobody's (a gateway's copy) proves nothing.
 */
enum SglangLengthSentence {
  /**
   * S1, {@code tokenizer_manager.py} {@code _validate_one_request} (v0.5.18:1196-1219): {@code N +
   * R >= C}, stating N + R and C; the Rust front end's {@code check_total_tokens} ({@code
   * ingress.rs:666-681}) writes the same.
   */
  CONTEXT(
      SglangAdmission.CONTEXT_CHECK,
      "The input \\((?<input>[0-9]+) tokens\\) is longer than the model's context length"
          + " \\((?<context>[0-9]+) tokens\\)\\."),
  /** S2, the next check there (v0.5.18:1221-1246; {@code ingress.rs:695-705}). */
  TOTAL(
      "total-token check",
      "Requested token count exceeds the model's maximum context length of (?<context>[0-9]+)"
          + " tokens\\. You requested a total of (?<total>[0-9]+) tokens: (?<input>[0-9]+) tokens"
          + " from the input messages and (?<output>[0-9]+) tokens for the completion\\. Please"
          + " reduce the number of tokens in the input messages or the completion to fit within the"
          + " limit\\."),
  /**
   * S4, {@code managers/utils.py} {@code validate_input_length} (v0.5.18:193-223): {@code N >= M},
   * stating N and M.
   */
  SCHEDULER(
      SglangAdmission.SCHEDULER_CHECK,
      "Input length \\((?<input>[0-9]+) tokens\\) exceeds the maximum allowed length"
          + " \\((?<limit>[0-9]+) tokens\\)\\. Use a shorter input or enable --allow-auto-truncate\\.");

  private final String errorClass;
  private final Pattern pattern;

  SglangLengthSentence(String errorClass, String regex) {
    this.errorClass = errorClass;
    this.pattern = Pattern.compile(regex);
  }

  /** The check's name as kvguard records it. */
  String errorClass() {
    return errorClass;
  }

  /** The form whose whole sentence {@code message} is, if any. */
  static Optional<SglangLengthSentence> of(String message) {
    return List.of(values()).stream().filter(f -> f.pattern.matcher(message).matches()).findFirst();
  }

  /** The limit (max_req_input_len) a whole scheduler sentence (S4) states; empty for any other. */
  static Optional<Long> schedulerLimit(String message) {
    Matcher m = SCHEDULER.pattern.matcher(message);
    return m.matches() ? number(m, "limit") : Optional.empty();
  }

  /**
   * Why the numbers {@code message} states are not those of SGLang's refusal of this probe, or
   * empty when they are. Every number is the engine's, parsed as digits, so it is safe to show.
   *
   * @param message a sentence of this form ({@link #of})
   * @param sentTokens the token IDs kvguard sent (N)
   * @param outputTokens {@code max_new_tokens} kvguard asked for
   * @param contextTokens the context length the pod reported ({@code /v1/models} max_model_len)
   */
  Optional<String> mismatch(
      String message, long sentTokens, long outputTokens, long contextTokens) {
    Matcher m = pattern.matcher(message);
    if (!m.matches()) {
      return Optional.of("its message is not SGLang's sentence, whole");
    }
    Optional<Long> input = number(m, "input");
    if (input.isEmpty()) {
      return Optional.of("its token count is no number kvguard could have caused");
    }
    long stated = input.get();
    if (this == SCHEDULER) {
      // The scheduler counts the prompt's own token IDs (origin_input_ids), nothing added.
      Optional<Long> limit = number(m, "limit");
      if (stated != sentTokens) {
        return Optional.of(
            "it states a prompt of " + stated + " tokens, and kvguard sent " + sentTokens);
      }
      if (limit.isEmpty() || limit.get() > stated) {
        return Optional.of("its limit is not one the prompt it states reaches (N >= M)");
      }
      return Optional.empty();
    }
    // The tokenizer counts the prompt plus the tokens it reserves for speculative decoding (R >=
    // 0).
    if (stated < sentTokens) {
      return Optional.of(
          "it states a prompt of " + stated + " tokens, and kvguard sent " + sentTokens);
    }
    Optional<Long> context = number(m, "context");
    if (context.isEmpty() || context.get() != contextTokens) {
      return Optional.of(
          "it states a context length of "
              + context.map(String::valueOf).orElse("(no number)")
              + " tokens, and the pod reports max_model_len "
              + contextTokens);
    }
    if (this == CONTEXT) {
      return stated >= contextTokens
          ? Optional.empty()
          : Optional.of("the prompt it states is within the context length it states");
    }
    if (!number(m, "output").equals(Optional.of(outputTokens))) {
      return Optional.of(
          "its completion tokens are not the " + outputTokens + " kvguard asked for");
    }
    Optional<Long> total = number(m, "total");
    if (total.isEmpty() || total.get() != stated + outputTokens || total.get() <= contextTokens) {
      return Optional.of("its total is not the prompt plus the completion, above the context");
    }
    return Optional.empty();
  }

  private static Optional<Long> number(Matcher m, String name) {
    if (!m.pattern().pattern().contains("(?<" + name + ">")) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseLong(m.group(name)));
    } catch (NumberFormatException e) {
      // More digits than a long holds: no token count kvguard sent or was told.
      return Optional.empty();
    }
  }
}

package io.kvguard.probe;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The two length refusals of TGI's router, each matched whole: {@code InferError::ValidationError}
 * ("Input validation error: {0}", {@code router/src/infer/mod.rs:414} at v3.3.7) around {@code
 * ValidationError::MaxTotalTokens} or {@code InputLength} ({@code
 * router/src/validation.rs:999-1002} at v3.3.7; the same words at every tag from v1.0.0 to v3.3.7).
 * {@code validate_input} checks them in this order ({@code validation.rs:145-187}), so the second
 * is only ever the answer to a prompt the first let through.
 *
 * <p>TGI counts the prompt with the model's tokenizer ({@code encoding.len()}, special tokens
 * included), so its count is not the number of units kvguard sent: each " a" unit is at least one
 * token, and every token covers at least one of the text's bytes, plus the few special tokens the
 * tokenizer's post-processor adds.
 */
enum TgiLengthSentence {
  /** {@code input_length + max_new_tokens > max_total_tokens}. */
  MAX_TOTAL_TOKENS(
      "Input validation error: `inputs` tokens \\+ `max_new_tokens` must be <= (?<total>[0-9]+)\\."
          + " Given: (?<prompt>[0-9]+) `inputs` tokens and (?<output>[0-9]+) `max_new_tokens`"),
  /** {@code input_length > max_input_length}, reached after the first. */
  INPUT_LENGTH(
      "Input validation error: `inputs` must have less than (?<input>[0-9]+) tokens\\. Given:"
          + " (?<prompt>[0-9]+)");

  /**
   * Special tokens a tokenizer's post-processor may add around the text (BOS, EOS, a few role
   * markers): more than this above the text's bytes is no count of kvguard's prompt.
   */
  static final long SPECIAL_TOKENS_ALLOWED = 8;

  private final Pattern pattern;

  TgiLengthSentence(String regex) {
    this.pattern = Pattern.compile(regex);
  }

  /** The form whose whole sentence {@code error} is, if any. */
  static Optional<TgiLengthSentence> of(String error) {
    return List.of(values()).stream().filter(f -> f.pattern.matcher(error).matches()).findFirst();
  }

  /**
   * Why the numbers {@code error} states are not those of TGI's refusal of this probe, or empty
   * when they are. Every number is parsed as plain digits, so it is safe to show.
   *
   * @param error a sentence of this form ({@link #of})
   * @param sentUnits the " a" units kvguard sent
   * @param textBytes the bytes of the text kvguard sent ({@code inputs})
   * @param outputTokens {@code max_new_tokens} kvguard asked for (at most 1024, so TGI's chunk is
   *     the same number)
   * @param maxTotalTokens {@code max_total_tokens} the pod's /info reported
   * @param maxInputTokens {@code max_input_tokens} the pod's /info reported, where known
   */
  Optional<String> mismatch(
      String error,
      long sentUnits,
      long textBytes,
      long outputTokens,
      long maxTotalTokens,
      OptionalLong maxInputTokens) {
    Matcher m = pattern.matcher(error);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a sentence of form " + name());
    }
    Optional<Long> prompt = number(m, "prompt");
    if (prompt.isEmpty()) {
      return Optional.of("a number in the sentence is not a token count");
    }
    long n = prompt.get();
    if (n < sentUnits || n > textBytes + SPECIAL_TOKENS_ALLOWED) {
      return Optional.of(
          "it states a prompt of "
              + n
              + " tokens, and kvguard sent "
              + sentUnits
              + " units of text ("
              + textBytes
              + " bytes), at least one token each");
    }
    if (this == MAX_TOTAL_TOKENS) {
      Optional<Long> total = number(m, "total");
      Optional<Long> output = number(m, "output");
      if (total.isEmpty() || output.isEmpty()) {
        return Optional.of("a number in the sentence is not a token count");
      }
      if (total.get() != maxTotalTokens) {
        return Optional.of(
            "it states a limit of "
                + total.get()
                + " tokens, and the pod's /info reports max_total_tokens "
                + maxTotalTokens);
      }
      if (output.get() != outputTokens) {
        return Optional.of(
            "it states " + output.get() + " max_new_tokens, and kvguard asked for " + outputTokens);
      }
      if (n + output.get() <= maxTotalTokens) {
        return Optional.of("its prompt and max_new_tokens fit max_total_tokens, which TGI admits");
      }
      return Optional.empty();
    }
    Optional<Long> input = number(m, "input");
    if (input.isEmpty()) {
      return Optional.of("a number in the sentence is not a token count");
    }
    long limit = input.get();
    if (maxInputTokens.isPresent() && limit != maxInputTokens.getAsLong()) {
      return Optional.of(
          "it states a limit of "
              + limit
              + " tokens, and the pod's /info reports max_input_tokens "
              + maxInputTokens.getAsLong());
    }
    if (limit >= maxTotalTokens) {
      // TGI's launcher refuses to start unless max_input_tokens < max_total_tokens.
      return Optional.of(
          "it states an input limit of "
              + limit
              + " tokens, not below the pod's max_total_tokens "
              + maxTotalTokens);
    }
    if (n <= limit) {
      return Optional.of("its prompt is within its input limit, which TGI admits");
    }
    if (n + outputTokens > maxTotalTokens) {
      return Optional.of(
          "its prompt and max_new_tokens exceed max_total_tokens "
              + maxTotalTokens
              + ", which TGI checks first and answers with the other sentence");
    }
    return Optional.empty();
  }

  private static Optional<Long> number(Matcher m, String group) {
    String digits = m.group(group);
    // Rust's {} writes a usize as plain digits: no sign, no leading zero.
    if (digits.length() > 1 && digits.startsWith("0")) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseLong(digits));
    } catch (NumberFormatException e) {
      // More digits than a long holds: no token count TGI wrote.
      return Optional.empty();
    }
  }
}

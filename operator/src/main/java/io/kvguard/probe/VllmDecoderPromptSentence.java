package io.kvguard.probe;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sentence of vLLM's engine-side prompt-length check (V4) when the prompt is exactly {@code
 * max_model_len} tokens, matched whole: {@code InputProcessor._validate_prompt_len} in {@code
 * vllm/v1/engine/input_processor.py:402-447} at jsboige/vllm main {@code ffd91ee17a} (2026-08-22),
 * added by PR #27099 (119c4927b, 2025-11-13) in {@code vllm/v1/engine/processor.py} with the same
 * words. Raised as a {@code ValueError}, since PR #49665 (58f965939, 2026-07-29) a {@code
 * VLLMValidationError} without a parameter, so {@code str()} adds nothing and {@code
 * create_error_response} ({@code entrypoints/serve/utils/error_response.py}) answers HTTP 400
 * {@code {"error": {"message", "type": "BadRequestError", "param": null, "code": 400}}}.
 *
 * <p>Its other branch ("The decoder prompt (length N) is longer than the maximum model length of
 * C.", N &gt; C) is not here: V2 refuses such a prompt first, so that sentence never answers a
 * probe prompt sized for either check.
 */
final class VllmDecoderPromptSentence {
  private static final Pattern SENTENCE =
      Pattern.compile(
          "The decoder prompt \\(length (?<prompt>[0-9]+)\\) plus the number of requested output"
              + " tokens \\(at least 1\\) is longer than the maximum model length of"
              + " (?<context>[0-9]+)\\. Make sure that `max_model_len` is no smaller than the number"
              + " of text tokens \\(prompt \\+ requested output tokens\\)\\.");

  private VllmDecoderPromptSentence() {}

  /** Whether {@code message} is the sentence, whole. */
  static boolean is(String message) {
    return SENTENCE.matcher(message).matches();
  }

  /**
   * Why the numbers the sentence states are not those of this probe, or empty when they are: the
   * length is the prompt kvguard sent, and the maximum model length is the pod's max_model_len.
   */
  static Optional<String> mismatch(String message, long sentTokens, long contextTokens) {
    Matcher m = SENTENCE.matcher(message);
    if (!m.matches()) {
      throw new IllegalArgumentException("not vLLM's decoder-prompt sentence");
    }
    String prompt = m.group("prompt");
    String context = m.group("context");
    // Python's f-string writes an int as plain digits.
    if (!prompt.equals(Long.toString(sentTokens))) {
      return Optional.of(
          "it states a prompt of " + digits(prompt) + " tokens, and kvguard sent " + sentTokens);
    }
    if (!prompt.equals(context)) {
      return Optional.of(
          "it states a prompt of another length than the maximum model length, and vLLM writes"
              + " that sentence only for a prompt of exactly that length");
    }
    if (!context.equals(Long.toString(contextTokens))) {
      return Optional.of(
          "it states a maximum model length of "
              + digits(context)
              + ", and the pod reports max_model_len "
              + contextTokens);
    }
    return Optional.empty();
  }

  /** The digits as stated, shortened when longer than any token count. */
  private static String digits(String digits) {
    return digits.length() > 19 ? digits.substring(0, 19) + "…" : digits;
  }
}

package io.kvguard.probe;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sentences vLLM's prompt-length check has written into its refusal of a token-ID prompt on
 * {@code POST /v1/completions}, each matched whole (anchored, every word and number), with the
 * numbers each one states checked against what kvguard sent and what the pod reported. Read in
 * vllm-project/vllm's history through the fork jsboige/vllm (main up to {@code ffd91ee17a},
 * 2026-08-22, and tags v0.3.2 to v0.7.2); each form names the commit that introduced it.
 *
 * <p>A gateway that counts tokens itself may copy a sentence; it cannot know the context length the
 * pod reports and the exact prompt kvguard sent unless it is the engine, so numbers that disagree
 * are not vLLM's refusal.
 */
enum VllmLengthSentence {
  /**
   * {@code serving_engine.py} {@code _validate_input}, {@code token_num + max_tokens >
   * max_model_len}: tags v0.3.2 through v0.7.2 and main until PR #22803 (da2705198, 2025-08-13).
   */
  REQUESTED_TOTAL(
      "This model's maximum context length is (?<context>[0-9]+) tokens\\. However, you requested"
          + " (?<total>[0-9]+) tokens \\((?<prompt>[0-9]+) in the messages, (?<output>[0-9]+) in"
          + " the completion\\)\\. Please reduce the length of the messages or completion\\.",
      Stated.CONTEXT,
      Param.NULL),
  /**
   * {@code token_num >= max_model_len} in {@code _validate_input} from PR #22803 (da2705198,
   * 2025-08-13), stating the context length; the renderer's {@code _create_tokens_prompt} from PR
   * #24995 (ea3de5ef0, 2025-09-16), stating {@code max_model_len - max_tokens} as its "context
   * length". (PR #24405, 2025-09-09, to PR #24995 wrote "This maximum context length": not read as
   * vLLM's.)
   */
  REQUEST_HAS(
      "This model's maximum context length is (?<context>[0-9]+) tokens\\. However, your request"
          + " has (?<prompt>[0-9]+) input tokens\\. Please reduce the length of the input"
          + " messages\\.",
      Stated.CONTEXT_OR_INPUT_LIMIT,
      Param.NULL),
  /**
   * The renderer's sentence as a {@code VLLMValidationError}, whose {@code str()} appends the
   * parameter and value: PR #30134 (769f27e70, 2025-12-23); {@code param} is null where the handler
   * still passed {@code str(e)} and {@code input_tokens} after PR #32319 (2026-01-14).
   */
  REQUEST_HAS_PARAMETER(
      "This model's maximum context length is (?<context>[0-9]+) tokens\\. However, your request"
          + " has (?<prompt>[0-9]+) input tokens\\. Please reduce the length of the input"
          + " messages\\. \\(parameter=input_tokens, value=(?<value>[0-9]+)\\)",
      Stated.INPUT_LIMIT,
      Param.NULL_OR_INPUT_TOKENS),
  /**
   * {@code vllm/renderers/params.py} {@code _token_len_check}: PR #32863 (f0a1c8453, 2026-01-31).
   */
  YOU_PASSED_BARE(
      "You passed (?<prompt>[0-9]+) input tokens and requested (?<output>[0-9]+) output tokens\\."
          + " However, the model's context length is only (?<context>[0-9]+), resulting in a"
          + " maximum input length of (?<limit>[0-9]+)\\. Please reduce the length of the input"
          + " messages\\. \\(parameter=input_tokens, value=(?<value>[0-9]+)\\)",
      Stated.CONTEXT,
      Param.INPUT_TOKENS),
  /** The same check reworded by PR #31366 (a32cb49b6, 2026-02-06). */
  YOU_PASSED(
      "You passed (?<prompt>[0-9]+) input tokens and requested (?<output>[0-9]+) output tokens\\."
          + " However, the model's context length is only (?<context>[0-9]+) tokens, resulting in"
          + " a maximum input length of (?<limit>[0-9]+) tokens\\. Please reduce the length of"
          + " the input prompt\\. \\(parameter=input_tokens, value=(?<value>[0-9]+)\\)",
      Stated.CONTEXT,
      Param.INPUT_TOKENS),
  /**
   * The same check reworded by PR #36197 (43f10573c, 2026-03-05), unchanged at ffd91ee17a: "at
   * least" when the prompt is exactly one token over, because the tokenizer stops there.
   */
  PROMPT_CONTAINS(
      "This model's maximum context length is (?<context>[0-9]+) tokens\\. However, you requested"
          + " (?<output>[0-9]+) output tokens and your prompt contains (?<atLeast>at least )?"
          + "(?<prompt>[0-9]+) input tokens, for a total of (?<atLeastTotal>at least )?"
          + "(?<total>[0-9]+) tokens\\. Please reduce the length of the input prompt or the number"
          + " of requested output tokens\\. \\(parameter=input_tokens, value=(?<value>[0-9]+)\\)",
      Stated.CONTEXT,
      Param.INPUT_TOKENS);

  /** Which figure the sentence calls the context length. */
  enum Stated {
    CONTEXT,
    /** {@code max_model_len - max_tokens}, the renderer's {@code max_length}. */
    INPUT_LIMIT,
    CONTEXT_OR_INPUT_LIMIT
  }

  /** The {@code param} field vLLM sends with the sentence. */
  enum Param {
    NULL,
    INPUT_TOKENS,
    NULL_OR_INPUT_TOKENS;

    boolean allows(String param) {
      return switch (this) {
        case NULL -> param == null;
        case INPUT_TOKENS -> "input_tokens".equals(param);
        case NULL_OR_INPUT_TOKENS -> param == null || "input_tokens".equals(param);
      };
    }
  }

  private final Pattern pattern;
  private final Stated stated;
  private final Param param;

  VllmLengthSentence(String regex, Stated stated, Param param) {
    this.pattern = Pattern.compile(regex);
    this.stated = stated;
    this.param = param;
  }

  Param param() {
    return param;
  }

  /** The form whose whole sentence {@code message} is, if any. */
  static Optional<VllmLengthSentence> of(String message) {
    return List.of(values()).stream().filter(f -> f.pattern.matcher(message).matches()).findFirst();
  }

  /**
   * Why the numbers {@code message} states are not those of a refusal of this probe, or empty when
   * they are. Every number is the engine's, parsed as digits, so it is safe to show.
   *
   * @param message a sentence of this form ({@link #of})
   * @param sentTokens the prompt kvguard sent, in tokens
   * @param outputTokens the output tokens kvguard asked for ({@code max_tokens})
   * @param contextTokens the context length the pod reported ({@code max_model_len})
   */
  Optional<String> mismatch(
      String message, long sentTokens, long outputTokens, long contextTokens) {
    Matcher m = pattern.matcher(message);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a sentence of form " + name());
    }
    Optional<Long> prompt = number(m, "prompt");
    Optional<Long> output = number(m, "output");
    Optional<Long> context = number(m, "context");
    if (prompt.isEmpty() || context.isEmpty() || output.isEmpty() && hasGroup("output")) {
      return Optional.of("a number in the sentence is too large to be a token count");
    }
    long n = prompt.get();
    long inputLimit = contextTokens - outputTokens;
    boolean atLeast = group(m, "atLeast").isPresent();
    if (atLeast != group(m, "atLeastTotal").isPresent()) {
      return Optional.of("\"at least\" qualifies one of the two counts only");
    }
    if (atLeast ? n != inputLimit + 1 || n > sentTokens : n != sentTokens) {
      return Optional.of(
          "it states a prompt of "
              + (atLeast ? "at least " : "")
              + n
              + " tokens, and kvguard sent "
              + sentTokens);
    }
    if (output.isPresent() && output.get() != outputTokens) {
      return Optional.of(
          "it states " + output.get() + " output tokens, and kvguard asked for " + outputTokens);
    }
    long statedContext = context.get();
    boolean contextHolds =
        switch (stated) {
          case CONTEXT -> statedContext == contextTokens;
          case INPUT_LIMIT -> statedContext == inputLimit;
          case CONTEXT_OR_INPUT_LIMIT ->
              statedContext == contextTokens || statedContext == inputLimit;
        };
    if (!contextHolds) {
      return Optional.of(
          "it states a context length of "
              + statedContext
              + " tokens, and the pod reports max_model_len "
              + contextTokens);
    }
    if (hasGroup("limit") && !number(m, "limit").equals(Optional.of(inputLimit))) {
      return Optional.of("its maximum input length is not max_model_len minus max_tokens");
    }
    if (hasGroup("total") && !number(m, "total").equals(Optional.of(n + outputTokens))) {
      return Optional.of("its total is not the prompt plus the output tokens");
    }
    if (hasGroup("value") && !number(m, "value").equals(Optional.of(n))) {
      return Optional.of("its value is not the prompt's length");
    }
    return Optional.empty();
  }

  private boolean hasGroup(String name) {
    return pattern.pattern().contains("(?<" + name + ">");
  }

  private static Optional<String> group(Matcher m, String name) {
    try {
      return Optional.ofNullable(m.group(name));
    } catch (IllegalArgumentException e) {
      // This form has no such group.
      return Optional.empty();
    }
  }

  private static Optional<Long> number(Matcher m, String name) {
    Optional<String> digits = group(m, name);
    if (digits.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseLong(digits.get()));
    } catch (NumberFormatException e) {
      // More digits than a long holds: no token count kvguard sent or was told.
      return Optional.empty();
    }
  }
}

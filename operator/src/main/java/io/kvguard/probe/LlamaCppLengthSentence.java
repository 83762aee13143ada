package io.kvguard.probe;

import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The messages llama.cpp server has written beside {@code exceed_context_size_error} when a
 * generation prompt reaches the slot's context ({@code n_tokens >= slot.n_ctx}), each matched
 * whole. Read in ggml-org/llama.cpp's history (through the fork Deathnetworks/llama.cpp-PoC, which
 * holds upstream up to d14ce3dab, 2026-05-19); each form names the commit that wrote it. The
 * embedding check's "input (N tokens) is larger than the max context size" is not here: {@code
 * /completion} is a generation task, which never takes that path.
 */
enum LlamaCppLengthSentence {
  /**
   * PR #15780 (a68d91442, 2025-09-04), {@code tools/server/server.cpp}: the sentence the refusal
   * had carried as an {@code invalid_request_error} since PR #9607, now with the new type and the
   * counts as fields.
   */
  ENABLE_CONTEXT_SHIFT(
      "the request exceeds the available context size\\. try increasing the context size or"
          + " enable context shift"),
  /** PR #16486 (68ee98ae1, 2025-10-10). */
  TRY_INCREASING_IT("the request exceeds the available context size, try increasing it"),
  /**
   * PR #18174 (cc0a04343, 2025-12-19), unchanged at d14ce3dab ({@code
   * tools/server/server-context.cpp:2500-2507}): the counts in the sentence too.
   */
  WITH_COUNTS(
      "request \\((?<prompt>[0-9]+) tokens\\) exceeds the available context size"
          + " \\((?<context>[0-9]+) tokens\\), try increasing it");

  private final Pattern pattern;

  LlamaCppLengthSentence(String regex) {
    this.pattern = Pattern.compile(regex);
  }

  /** The form whose whole sentence {@code message} is, if any. */
  static Optional<LlamaCppLengthSentence> of(String message) {
    return List.of(values()).stream().filter(f -> f.pattern.matcher(message).matches()).findFirst();
  }

  /**
   * Why the counts {@code message} states differ from the body's {@code n_prompt_tokens} and {@code
   * n_ctx}, or empty when they agree (forms without counts always agree).
   */
  Optional<String> mismatch(String message, long promptField, long contextField) {
    Matcher m = pattern.matcher(message);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a sentence of form " + name());
    }
    if (this != WITH_COUNTS) {
      return Optional.empty();
    }
    // %d in string_format: plain digits, no sign or leading zero.
    if (!m.group("prompt").equals(Long.toString(promptField))) {
      return Optional.of("the prompt length in its message is not its n_prompt_tokens");
    }
    if (!m.group("context").equals(Long.toString(contextField))) {
      return Optional.of("the context size in its message is not its n_ctx");
    }
    return Optional.empty();
  }
}

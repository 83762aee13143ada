package io.kvguard.verdict;

import java.util.List;

/**
 * What of an answer to a probe prompt can carry markers, as its engine's shell extracted it from
 * the body (which it then drops): token ID lists, text, or the reason there is nothing to scan.
 */
public sealed interface AnswerContent {

  /** Lists of token IDs the answer carried (e.g. SGLang's {@code output_ids}), each in order. */
  record TokenIds(List<long[]> sequences) implements AnswerContent {
    public TokenIds {
      sequences = List.copyOf(sequences);
    }
  }

  /** Text the answer carried (TGI's {@code generated_text}), for an engine sent text prompts. */
  record Text(String text) implements AnswerContent {
    public Text {
      java.util.Objects.requireNonNull(text, "text");
    }
  }

  /**
   * Nothing in the answer can be scanned; {@code why} is kvguard's own words (never the body's) and
   * safe to show.
   */
  record Unreadable(String why) implements AnswerContent {}
}

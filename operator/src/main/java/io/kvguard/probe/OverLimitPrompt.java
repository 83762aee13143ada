package io.kvguard.probe;

import java.nio.charset.StandardCharsets;

/**
 * The request the rejection probe sends: a prompt of exactly the given number of tokens asking for one output
 * token. Where the engine accepts token IDs no tokenizer is involved; the ID is a small one present in every
 * common vocabulary, and its meaning does not matter because the engine must refuse before running it.
 */
public record OverLimitPrompt(String path, byte[] body) {
  static final int TOKEN_ID = 100;

  /** A JSON array of {@code tokens} token IDs. */
  static String tokenIds(long tokens) {
    StringBuilder ids = new StringBuilder(Math.toIntExact(Math.multiplyExact(tokens, 4) + 2)).append('[');
    for (long i = 0; i < tokens; i++) {
      if (i > 0) {
        ids.append(',');
      }
      ids.append(TOKEN_ID);
    }
    return ids.append(']').toString();
  }

  static String quote(String text) {
    return "\"" + new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance()
        .quoteAsString(text == null ? "" : text)) + "\"";
  }

  static OverLimitPrompt json(String path, String json) {
    return new OverLimitPrompt(path, json.getBytes(StandardCharsets.UTF_8));
  }
}

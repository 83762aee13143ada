package io.kvguard.probe;

import io.kvguard.customresource.Engine;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The request the rejection probe sends: a prompt of exactly {@code tokens} token IDs (where the engine
 * accepts IDs, so no tokenizer is involved) asking for one output token. The ID is a small one present in
 * every common vocabulary; its meaning does not matter because the engine must refuse before running it.
 */
public record OverLimitPrompt(String path, byte[] body) {
  static final int TOKEN_ID = 100;

  /** The request for an engine, or empty when kvguard has no over-limit form for it. */
  public static Optional<OverLimitPrompt> forEngine(Engine engine, long tokens, String model) {
    return switch (engine.wireName()) {
      case "sglang" -> Optional.of(new OverLimitPrompt("/generate",
          json("{\"input_ids\":" + ids(tokens) + ",\"sampling_params\":{\"max_new_tokens\":1},\"stream\":false}")));
      case "vllm" -> Optional.of(new OverLimitPrompt("/v1/completions",
          json("{\"model\":" + quote(model) + ",\"prompt\":" + ids(tokens) + ",\"max_tokens\":1,\"stream\":false}")));
      case "llamacpp" -> Optional.of(new OverLimitPrompt("/completion",
          json("{\"prompt\":" + ids(tokens) + ",\"n_predict\":1,\"stream\":false}")));
      // TGI takes text only: one " a" per token is at least one token with every common tokenizer.
      case "tgi" -> Optional.of(new OverLimitPrompt("/generate",
          json("{\"inputs\":\"" + " a".repeat(Math.toIntExact(tokens)) + "\",\"parameters\":{\"max_new_tokens\":1}}")));
      default -> Optional.empty();
    };
  }

  private static String ids(long tokens) {
    StringBuilder ids = new StringBuilder(Math.toIntExact(tokens * 4 + 2)).append('[');
    for (long i = 0; i < tokens; i++) {
      if (i > 0) {
        ids.append(',');
      }
      ids.append(TOKEN_ID);
    }
    return ids.append(']').toString();
  }

  private static String quote(String text) {
    return "\"" + new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance()
        .quoteAsString(text == null ? "" : text)) + "\"";
  }

  private static byte[] json(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}

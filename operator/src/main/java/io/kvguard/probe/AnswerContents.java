package io.kvguard.probe;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.verdict.AnswerContent;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads the content of an engine's answer to a probe prompt (an answer where a refusal was due) for
 * the marker scan: the JSON body, handed to the engine's own extractor, or why it cannot be read.
 * Reasons are kvguard's words and never quote the body.
 */
final class AnswerContents {
  private AnswerContents() {}

  /**
   * The content {@code extract} finds in the answer's JSON object, or why there is none to scan: a
   * body longer than kvguard reads of an answer, empty, not JSON, or not one object.
   */
  static AnswerContent ofJsonObject(
      EngineResponse response, String engineName, Function<JsonNode, AnswerContent> extract) {
    if (response.isEmpty()) {
      return new AnswerContent.Unreadable("the answer was empty");
    }
    if (!response.complete()) {
      return new AnswerContent.Unreadable(
          "the answer has "
              + response.length()
              + " bytes, more than the "
              + Reading.RAW_HEAD_BYTES
              + " kvguard reads of an answer");
    }
    String type =
        response.contentType() == null ? "" : response.contentType().toLowerCase(Locale.ROOT);
    Optional<JsonNode> body = ErrorBodies.strictObject(response);
    if (body.isEmpty()) {
      return new AnswerContent.Unreadable(
          "the answer is not the JSON object "
              + engineName
              + " answers"
              + (type.contains("json") ? "" : " (content type " + EngineText.safe(type) + ")"));
    }
    return extract.apply(body.get());
  }

  /** {@code parent.field} as token IDs, when it is an array of integers; empty otherwise. */
  static Optional<long[]> tokenIds(JsonNode parent, String field) {
    JsonNode array = parent == null ? null : parent.get(field);
    if (array == null || !array.isArray()) {
      return Optional.empty();
    }
    long[] ids = new long[array.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode id = array.get(i);
      if (!id.isIntegralNumber() || !id.canConvertToLong()) {
        return Optional.empty();
      }
      ids[i] = id.longValue();
    }
    return Optional.of(ids);
  }
}

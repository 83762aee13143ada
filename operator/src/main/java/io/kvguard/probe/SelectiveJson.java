package io.kvguard.probe;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the part of a JSON answer a {@link Reading} selects while the answer streams in: values
 * off the selected paths are skipped by the parser and never become nodes or strings. What is kept
 * is bounded too ({@link #MAX_KEPT_VALUES}, {@link #MAX_KEPT_CHARS}), and the parser refuses input
 * no engine sends (nesting, string, number and name lengths below).
 */
final class SelectiveJson {
  /**
   * Values kept from one answer; SGLang's /server_info with 64 data-parallel ranks keeps about 200.
   */
  static final int MAX_KEPT_VALUES = 10_000;

  /** Characters of kept strings and field names from one answer. */
  static final int MAX_KEPT_CHARS = 256 * 1024;

  /**
   * Limits of the parser itself. No engine answer nests deeper than a dozen levels or carries a
   * number of more than a few dozen digits; the longest strings are chat templates (llama.cpp's
   * /props), a few tens of KiB. Field names are not interned (CANONICALIZE_FIELD_NAMES off): a page
   * of a million distinct keys must not grow the factory's symbol table.
   */
  static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(64)
                  .maxStringLength(MAX_KEPT_CHARS)
                  .maxNumberLength(100)
                  .maxNameLength(4096)
                  .build())
          .disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES)
          .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
          .build();

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** The selection did not fit its bounds, or the input broke the parser's limits. */
  static final class Refused extends Exception {
    Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** The input is not JSON; {@code byteOffset} says where (-1 when unknown). */
  static final class Malformed extends Exception {
    final long byteOffset;
    final boolean duplicateKey;

    Malformed(long byteOffset, boolean duplicateKey) {
      super(null, null, false, false);
      this.byteOffset = byteOffset;
      this.duplicateKey = duplicateKey;
    }
  }

  private final JsonParser parser;
  private int values;
  private long chars;

  private SelectiveJson(JsonParser parser) {
    this.parser = parser;
  }

  /**
   * The selected part of the document on {@code in}, or null for an empty input. Reads to the end:
   * anything after the first value is malformed.
   */
  static JsonNode read(InputStream in, List<Reading.JsonPath> paths)
      throws IOException, Refused, Malformed {
    try (JsonParser parser = FACTORY.createParser(in)) {
      SelectiveJson reader = new SelectiveJson(parser);
      try {
        JsonToken first = parser.nextToken();
        if (first == null) {
          return null;
        }
        JsonNode root = reader.value(first, paths, 0);
        if (parser.nextToken() != null) {
          throw new Malformed(parser.currentLocation().getByteOffset(), false);
        }
        return root;
      } catch (StreamConstraintsException e) {
        // Jackson's own words name the limit and never quote the input.
        throw new Refused(
            "JSON beyond kvguard's parser limits (" + limitOf(e.getOriginalMessage()) + ")");
      } catch (JsonProcessingException e) {
        throw new Malformed(e.getLocation() == null ? -1 : e.getLocation().getByteOffset(), false);
      }
    }
  }

  private JsonNode value(JsonToken token, List<Reading.JsonPath> active, int depth)
      throws IOException, Refused, Malformed {
    for (Reading.JsonPath path : active) {
      if (path.isComplete(depth)) {
        return whole(token);
      }
    }
    switch (token) {
      case START_OBJECT:
        return object(active, depth);
      case START_ARRAY:
        return array(active, depth);
      default:
        return scalar(token);
    }
  }

  private ObjectNode object(List<Reading.JsonPath> active, int depth)
      throws IOException, Refused, Malformed {
    ObjectNode object = NODES.objectNode();
    count(0);
    for (JsonToken token = next(parser); token != JsonToken.END_OBJECT; token = next(parser)) {
      String name = parser.currentName();
      JsonToken valueToken = next(parser);
      List<Reading.JsonPath> next = new ArrayList<>();
      for (Reading.JsonPath path : active) {
        if (path.at(depth).matchesField(name)) {
          next.add(path);
        }
      }
      if (next.isEmpty()) {
        parser.skipChildren();
        continue;
      }
      if (object.has(name)) {
        // Two values for a key the probe reads: which one the engine meant cannot be known.
        throw new Malformed(parser.currentTokenLocation().getByteOffset(), true);
      }
      count(name.length());
      object.set(name, value(valueToken, next, depth + 1));
    }
    return object;
  }

  private ArrayNode array(List<Reading.JsonPath> active, int depth)
      throws IOException, Refused, Malformed {
    ArrayNode array = NODES.arrayNode();
    count(0);
    boolean elementsSelected = false;
    for (Reading.JsonPath path : active) {
      elementsSelected |= path.at(depth).any() || path.at(depth).name().matches("[0-9]{1,9}");
    }
    int index = 0;
    for (JsonToken token = next(parser);
        token != JsonToken.END_ARRAY;
        token = next(parser), index++) {
      List<Reading.JsonPath> next = new ArrayList<>();
      for (Reading.JsonPath path : active) {
        if (path.at(depth).matchesIndex(index)) {
          next.add(path);
        }
      }
      if (next.isEmpty()) {
        parser.skipChildren();
        if (elementsSelected) {
          // Keeps the positions of the selected elements true.
          count(0);
          array.addNull();
        }
        continue;
      }
      array.add(value(token, next, depth + 1));
    }
    return array;
  }

  private JsonNode whole(JsonToken token) throws IOException, Refused, Malformed {
    switch (token) {
      case START_OBJECT:
        {
          ObjectNode object = NODES.objectNode();
          count(0);
          for (JsonToken t = next(parser); t != JsonToken.END_OBJECT; t = next(parser)) {
            String name = parser.currentName();
            JsonToken valueToken = next(parser);
            if (object.has(name)) {
              throw new Malformed(parser.currentTokenLocation().getByteOffset(), true);
            }
            count(name.length());
            object.set(name, whole(valueToken));
          }
          return object;
        }
      case START_ARRAY:
        {
          ArrayNode array = NODES.arrayNode();
          count(0);
          for (JsonToken t = next(parser); t != JsonToken.END_ARRAY; t = next(parser)) {
            array.add(whole(t));
          }
          return array;
        }
      default:
        return scalar(token);
    }
  }

  private JsonNode scalar(JsonToken token) throws IOException, Refused {
    switch (token) {
      case VALUE_STRING:
        {
          String text = parser.getText();
          count(text.length());
          return NODES.textNode(text);
        }
      case VALUE_NUMBER_INT:
        count(0);
        switch (parser.getNumberType()) {
          case INT:
            return NODES.numberNode(parser.getIntValue());
          case LONG:
            return NODES.numberNode(parser.getLongValue());
          default:
            return NODES.numberNode(parser.getBigIntegerValue());
        }
      case VALUE_NUMBER_FLOAT:
        count(0);
        return NODES.numberNode(parser.getDoubleValue());
      case VALUE_TRUE:
      case VALUE_FALSE:
        count(0);
        return NODES.booleanNode(token == JsonToken.VALUE_TRUE);
      case VALUE_NULL:
        count(0);
        return NODES.nullNode();
      default:
        throw new IllegalStateException("unexpected JSON token " + token);
    }
  }

  private void count(int characters) throws Refused {
    if (++values > MAX_KEPT_VALUES) {
      throw new Refused("more than " + MAX_KEPT_VALUES + " JSON values on the paths kvguard reads");
    }
    chars += characters;
    if (chars > MAX_KEPT_CHARS) {
      throw new Refused(
          "more than " + MAX_KEPT_CHARS + " characters of JSON text on the paths kvguard reads");
    }
  }

  /**
   * Jackson's message names the limit and the size seen, never the input; the pointer to its own
   * API goes.
   */
  private static String limitOf(String message) {
    return message == null ? "limit exceeded" : message.replaceAll(", from `[^`]*`", "").strip();
  }

  private static JsonToken next(JsonParser parser) throws IOException, Malformed {
    JsonToken token = parser.nextToken();
    if (token == null) {
      throw new Malformed(parser.currentLocation().getByteOffset(), false);
    }
    return token;
  }
}

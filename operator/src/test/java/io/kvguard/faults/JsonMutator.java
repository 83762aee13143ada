package io.kvguard.faults;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Corrupts a JSON engine answer without rewriting what it means: values replaced by hostile ones,
 * fields and rank entries dropped, types changed, keys duplicated, text truncated or garbled. None
 * of these can turn an answer into a coherent claim of a bigger pool, so a probe must never report
 * more than the truth after one.
 */
final class JsonMutator {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** Literal tokens, valid JSON or not, that a broken engine could put where a number belongs. */
  private static final String[] HOSTILE_TOKENS = {
    "null",
    "0",
    "-1",
    "-681280",
    "1.5",
    "681280.0",
    "6.8128e5",
    "\"681280\"",
    "true",
    "[]",
    "{}",
    "\"\"",
    "9223372036854775808",
    "18446744073709551616",
    "1e400",
    "-0",
    "NaN",
    "Infinity",
    "-Infinity",
    "0x10",
    "[681280]",
    "{\"value\":681280}"
  };

  private static final char[] NOISE = "{}[],:\" ax\\-.eE+\n".toCharArray();

  private final Random random;

  JsonMutator(Random random) {
    this.random = random;
  }

  /** Applies one random corruption to {@code json}; returns the new text. */
  String mutate(String json) {
    switch (random.nextInt(8)) {
      case 0:
        return treeEdit(json, this::replaceValue);
      case 1:
        return treeEdit(json, this::deleteField);
      case 2:
        return treeEdit(json, this::deleteArrayElement);
      case 3:
        return treeEdit(json, this::wrapValue);
      case 4:
        return duplicateKey(json);
      case 5:
        return json.isEmpty() ? garble(json) : json.substring(0, random.nextInt(json.length()));
      case 6:
        return garble(json);
      default:
        return replaceNumberToken(json);
    }
  }

  private interface Edit {
    void apply(List<Slot> slots);
  }

  /** A place in the tree: a field of an object or an element of an array. */
  private record Slot(JsonNode parent, String field, int index) {
    JsonNode value() {
      return field != null ? parent.get(field) : parent.get(index);
    }

    void set(JsonNode value) {
      if (field != null) {
        ((ObjectNode) parent).set(field, value);
      } else {
        ((ArrayNode) parent).set(index, value);
      }
    }
  }

  private String treeEdit(String json, Edit edit) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (Exception e) {
      return garble(json); // already broken by an earlier mutation
    }
    List<Slot> slots = new ArrayList<>();
    collect(root, slots);
    if (slots.isEmpty()) {
      return garble(json);
    }
    edit.apply(slots);
    try {
      return MAPPER.writeValueAsString(root);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void collect(JsonNode node, List<Slot> slots) {
    if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> entry = it.next();
        slots.add(new Slot(node, entry.getKey(), -1));
        collect(entry.getValue(), slots);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        slots.add(new Slot(node, null, i));
        collect(node.get(i), slots);
      }
    }
  }

  private Slot pick(List<Slot> slots) {
    return slots.get(random.nextInt(slots.size()));
  }

  private void replaceValue(List<Slot> slots) {
    Slot slot = pick(slots);
    switch (random.nextInt(9)) {
      case 0 -> slot.set(NODES.nullNode());
      case 1 -> slot.set(NODES.numberNode(0));
      case 2 -> slot.set(NODES.numberNode(-1 - random.nextInt(1_000_000)));
      case 3 -> slot.set(NODES.numberNode(random.nextDouble() * 4_000_000));
      case 4 -> slot.set(NODES.textNode(slot.value().asText()));
      case 5 -> slot.set(NODES.booleanNode(random.nextBoolean()));
      case 6 -> slot.set(NODES.numberNode(BigInteger.TWO.pow(63 + random.nextInt(10))));
      case 7 -> slot.set(NODES.objectNode());
      default -> slot.set(NODES.arrayNode());
    }
  }

  private void deleteField(List<Slot> slots) {
    List<Slot> fields = slots.stream().filter(s -> s.field() != null).toList();
    if (!fields.isEmpty()) {
      Slot slot = pick(fields);
      ((ObjectNode) slot.parent()).remove(slot.field());
    }
  }

  private void deleteArrayElement(List<Slot> slots) {
    List<Slot> elements = slots.stream().filter(s -> s.field() == null).toList();
    if (!elements.isEmpty()) {
      Slot slot = pick(elements);
      ((ArrayNode) slot.parent()).remove(slot.index());
    }
  }

  private void wrapValue(List<Slot> slots) {
    Slot slot = pick(slots);
    JsonNode value = slot.value();
    if (random.nextBoolean()) {
      slot.set(NODES.arrayNode().add(value));
    } else {
      slot.set(NODES.objectNode().set("value", value));
    }
  }

  /** Writes a second occurrence of a key, with another value, into the same object (text-level). */
  private String duplicateKey(String json) {
    List<Integer> keys = new ArrayList<>();
    for (int i = json.indexOf("\":"); i >= 0; i = json.indexOf("\":", i + 1)) {
      keys.add(i);
    }
    if (keys.isEmpty()) {
      return garble(json);
    }
    int colon = keys.get(random.nextInt(keys.size()));
    int open = json.lastIndexOf('"', colon - 1);
    if (open < 0) {
      return garble(json);
    }
    String key = json.substring(open, colon + 2);
    return json.substring(0, open)
        + key
        + HOSTILE_TOKENS[random.nextInt(HOSTILE_TOKENS.length)]
        + ","
        + json.substring(open);
  }

  /**
   * Replaces one character with structural noise; never with a digit, which would be a coherent new
   * figure.
   */
  private String garble(String json) {
    if (json.isEmpty()) {
      return "{";
    }
    int at = random.nextInt(json.length());
    char noise = NOISE[random.nextInt(NOISE.length)];
    return random.nextBoolean()
        ? json.substring(0, at) + noise + json.substring(at + 1)
        : json.substring(0, at) + noise + json.substring(at);
  }

  /**
   * Swaps one number token in the text for a hostile token (including the non-JSON NaN and
   * Infinity).
   */
  private String replaceNumberToken(String json) {
    java.util.regex.Matcher numbers =
        java.util.regex.Pattern.compile("(?<=[:\\[,])-?[0-9][0-9.eE+-]*").matcher(json);
    List<int[]> spans = new ArrayList<>();
    while (numbers.find()) {
      spans.add(new int[] {numbers.start(), numbers.end()});
    }
    if (spans.isEmpty()) {
      return garble(json);
    }
    int[] span = spans.get(random.nextInt(spans.size()));
    return json.substring(0, span[0])
        + HOSTILE_TOKENS[random.nextInt(HOSTILE_TOKENS.length)]
        + json.substring(span[1]);
  }
}

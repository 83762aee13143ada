package io.kvguard.faults;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Corrupts a Prometheus answer whose pool figures are sample values (TGI, TensorRT-LLM, the generic
 * probe): hostile sample values, duplicated series that disagree, truncated or garbled series
 * lines, hostile or dropped labels, shuffled and junk lines. Like {@link PrometheusMutator} it
 * never makes a series vanish coherently: no whole line is deleted, garbling never touches a quoted
 * label value nor writes a letter or a comment mark (a renamed metric or a commented-out line is a
 * coherent claim of one rank fewer), and labels that select the pool series ({@code
 * protectedLabels}) are never changed or dropped. Hostile values are never a larger valid figure.
 */
final class MetricTextMutator {
  /**
   * None of these becomes a larger valid figure when a later mutation truncates or garbles it (so
   * no long digit runs and no positive exponents: "1e400" cut to "1e4" would be a coherent 10,000).
   */
  private static final String[] HOSTILE_VALUES = {
    "NaN",
    "+Inf",
    "-Inf",
    "Inf",
    "0",
    "-0",
    "-1",
    "1.5",
    "0.999",
    "1e-9",
    "1x",
    "",
    "-1e999",
    "-2040000",
    "0x10",
    "2"
  };

  private static final String[] HOSTILE_LABELS = {
    "", "None", "0", "-1", "x", "NaN", " ", "\\\\", "a b"
  };
  private static final String[] JUNK = {
    "",
    "# HELP something else",
    "# TYPE x counter",
    "process_cpu_seconds_total 12.5",
    "other_gauge{a=\"b\"} NaN",
    "   ",
    "# EOF",
    "other_gauge +Inf"
  };

  /**
   * Structure only: no letters or digits (a renamed metric or a new figure), no '#' (a comment), no
   * newline.
   */
  private static final char[] NOISE = "{}\",= \\.-+\t".toCharArray();

  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");
  private static final Pattern QUOTED = Pattern.compile("\"[^\"]*\"");

  private final Random random;
  private final Set<String> metrics;
  private final Set<String> protectedLabels;

  MetricTextMutator(Random random, Set<String> metrics, Set<String> protectedLabels) {
    this.random = random;
    this.metrics = metrics;
    this.protectedLabels = protectedLabels;
  }

  String mutate(String text) {
    List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    List<Integer> targets = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (metrics.stream().anyMatch(m -> line.startsWith(m + "{") || line.startsWith(m + " "))) {
        targets.add(i);
      }
    }
    if (targets.isEmpty()) {
      lines.add(random.nextInt(lines.size() + 1), JUNK[random.nextInt(JUNK.length)]);
      return String.join("\n", lines);
    }
    int at = targets.get(random.nextInt(targets.size()));
    String line = lines.get(at);
    switch (random.nextInt(8)) {
      case 0 ->
          lines.set(at, withValue(line, HOSTILE_VALUES[random.nextInt(HOSTILE_VALUES.length)]));
      case 1 ->
          lines.add(
              at + 1,
              withValue(
                  line,
                  random.nextBoolean()
                      ? HOSTILE_VALUES[random.nextInt(HOSTILE_VALUES.length)]
                      : String.valueOf(1 + random.nextInt(4_000_000))));
      case 2 -> lines.set(at, line.substring(0, 1 + random.nextInt(line.length() - 1)));
      case 3 -> lines.set(at, garble(line));
      case 4 -> lines.set(at, hostileLabel(line));
      case 5 -> lines.set(at, dropLabel(line));
      case 6 -> Collections.shuffle(lines, random);
      default -> lines.add(random.nextInt(lines.size() + 1), JUNK[random.nextInt(JUNK.length)]);
    }
    return String.join("\n", lines);
  }

  /**
   * Replaces the value after the last space; a line without one (garbled before) gets the value
   * appended.
   */
  private static String withValue(String line, String value) {
    int space = line.lastIndexOf(' ');
    return space < 0 ? line + " " + value : line.substring(0, space + 1) + value;
  }

  private List<int[]> unprotectedLabelValues(String line) {
    List<int[]> spans = new ArrayList<>();
    Matcher labels = LABEL.matcher(line);
    while (labels.find()) {
      if (!protectedLabels.contains(labels.group(1))) {
        spans.add(new int[] {labels.start(), labels.end(), labels.start(2), labels.end(2)});
      }
    }
    return spans;
  }

  private String hostileLabel(String line) {
    List<int[]> spans = unprotectedLabelValues(line);
    if (spans.isEmpty()) {
      return garble(line);
    }
    int[] span = spans.get(random.nextInt(spans.size()));
    return line.substring(0, span[2])
        + HOSTILE_LABELS[random.nextInt(HOSTILE_LABELS.length)]
        + line.substring(span[3]);
  }

  private String dropLabel(String line) {
    List<int[]> spans = unprotectedLabelValues(line);
    if (spans.isEmpty()) {
      return garble(line);
    }
    int[] span = spans.get(random.nextInt(spans.size()));
    return line.substring(0, span[0])
        + line.substring(span[1]); // a stray comma is legal between labels
  }

  /**
   * One character outside every quoted label value replaced by, or prefixed with, structural noise.
   */
  private String garble(String line) {
    boolean[] quoted = new boolean[line.length()];
    Matcher values = QUOTED.matcher(line);
    while (values.find()) {
      Arrays.fill(quoted, values.start(), values.end(), true);
    }
    int at;
    int tries = 0;
    do {
      at = random.nextInt(line.length());
    } while (quoted[at] && ++tries < 32);
    if (quoted[at]) {
      return line + " ."; // a trailing token: timestamp-like junk
    }
    char noise = NOISE[random.nextInt(NOISE.length)];
    return random.nextBoolean()
        ? line.substring(0, at) + noise + line.substring(at + 1)
        : line.substring(0, at) + noise + line.substring(at);
  }
}

package io.kvguard.faults;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Corrupts a vLLM /metrics answer: hostile label values and sample values, dropped labels,
 * duplicated series that disagree, truncated or garbled cache_config_info lines, shuffled lines and
 * junk lines. It never deletes a whole cache_config_info series nor the kv_cache_size_tokens label
 * of every series: such an answer is a coherent claim of fewer engines or of an older vLLM build
 * (see docs/reliability.md, known limits). For the same reason an engine is only ever renumbered to
 * an unused index, never merged into another.
 */
final class PrometheusMutator {
  static final String CACHE = "vllm:cache_config_info";
  private static final String[] HOSTILE_LABELS = {
    "None",
    "",
    "0",
    "-1",
    "-2040000",
    "1.5",
    "2040000.0",
    "NaN",
    "+Inf",
    "-Inf",
    "1e6",
    "0x10",
    " 2040000",
    "2040000 ",
    "9223372036854775808",
    "99999999999999999999",
    "\u0661\u0662\u0663",
    "2,040,000",
    "true"
  };
  private static final String[] HOSTILE_VALUES = {
    "NaN", "+Inf", "-Inf", "0", "2", "1e-9", "-1", "0.999", "Inf", "1x"
  };
  private static final String[] JUNK = {
    "", "# HELP something else", "# TYPE vllm:cache_config_info counter",
        "vllm:gpu_cache_usage_perc{engine=\"0\"} NaN",
    "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} +Inf", "# EOF", "   ",
        "process_cpu_seconds_total 12.5"
  };
  private static final Pattern LABEL = Pattern.compile("([a-z_]+)=\"([^\"]*)\"");
  private static final char[] NOISE = "{}\",= #\\abc.-+\t".toCharArray();

  private final Random random;

  PrometheusMutator(Random random) {
    this.random = random;
  }

  String mutate(String text) {
    List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
    List<Integer> cache = cacheLines(lines);
    if (cache.isEmpty()) {
      lines.add(random.nextInt(lines.size() + 1), JUNK[random.nextInt(JUNK.length)]);
      return String.join("\n", lines);
    }
    int at = cache.get(random.nextInt(cache.size()));
    String line = lines.get(at);
    switch (random.nextInt(9)) {
      case 0 -> lines.set(at, replaceLabelValue(line, false));
      case 1 -> lines.set(at, dropLabel(line, cache.size() == 1));
      case 2 ->
          lines.set(
              at,
              line.substring(0, line.lastIndexOf(' ') + 1)
                  + HOSTILE_VALUES[random.nextInt(HOSTILE_VALUES.length)]);
      case 3 -> lines.add(at + 1, replaceLabelValue(line, true));
      case 4 -> lines.set(at, line.substring(0, 1 + random.nextInt(line.length() - 1)));
      case 5 -> lines.set(at, garble(line));
      case 6 -> Collections.shuffle(lines, random);
      case 7 -> lines.add(random.nextInt(lines.size() + 1), JUNK[random.nextInt(JUNK.length)]);
      default -> lines.set(at, renumberEngine(line, String.join("\n", lines)));
    }
    return String.join("\n", lines);
  }

  private static List<Integer> cacheLines(List<String> lines) {
    List<Integer> found = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith(CACHE + "{") && lines.get(i).contains(" ")) {
        found.add(i);
      }
    }
    return found;
  }

  /** Moves the series to an engine index no other series uses, so no two engines merge. */
  private String renumberEngine(String line, String text) {
    for (int tries = 0; tries < 8; tries++) {
      String index = String.valueOf(4 + random.nextInt(8));
      if (!text.contains("engine=\"" + index + "\"")) {
        return line.replaceFirst("engine=\"[^\"]*\"", "engine=\"" + index + "\"");
      }
    }
    return line;
  }

  /**
   * A hostile value for one label; the engine label only on a copied series (the original keeps its
   * engine).
   */
  private String replaceLabelValue(String line, boolean mayTouchEngine) {
    List<int[]> values = new ArrayList<>();
    Matcher labels = LABEL.matcher(line);
    while (labels.find()) {
      if (mayTouchEngine || !labels.group(1).equals("engine")) {
        values.add(new int[] {labels.start(2), labels.end(2)});
      }
    }
    if (values.isEmpty()) {
      return garble(line);
    }
    int[] span = values.get(random.nextInt(values.size()));
    return line.substring(0, span[0])
        + HOSTILE_LABELS[random.nextInt(HOSTILE_LABELS.length)]
        + line.substring(span[1]);
  }

  /** Drops one label; kv_cache_size_tokens only when another series still carries it. */
  private String dropLabel(String line, boolean onlySeries) {
    List<String> droppable =
        new ArrayList<>(List.of("num_gpu_blocks", "block_size", "cache_dtype"));
    if (!onlySeries) {
      droppable.add("kv_cache_size_tokens");
    }
    String label = droppable.get(random.nextInt(droppable.size()));
    return line.replaceFirst(",?" + label + "=\"[^\"]*\"", "").replace("{,", "{");
  }

  /**
   * One character replaced by or prefixed with noise; never a digit (a coherent new figure) and
   * never inside the engine label's name (an engine merged into engine 0 is a coherent claim of one
   * engine fewer).
   */
  private String garble(String line) {
    int engine = line.indexOf("engine=");
    int at;
    do {
      at = random.nextInt(line.length());
    } while (engine >= 0 && at >= engine && at <= engine + "engine=".length());
    char noise = NOISE[random.nextInt(NOISE.length)];
    return random.nextBoolean()
        ? line.substring(0, at) + noise + line.substring(at + 1)
        : line.substring(0, at) + noise + line.substring(at);
  }
}

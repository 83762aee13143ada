package io.kvguard.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A deliberately small GNU-style parser: {@code --name value}, {@code --name=value} and bare flags.
 * Unknown options, repeated options (but those declared repeatable) and positional words are
 * errors, so a typo never silently changes a verdict.
 */
public final class Arguments {
  private final Map<String, String> values;
  private final Map<String, List<String>> repeated;

  private Arguments(Map<String, String> values, Map<String, List<String>> repeated) {
    this.values = values;
    this.repeated = repeated;
  }

  /**
   * @param valued options that take a value
   * @param flags options that take none
   */
  public static Arguments parse(String[] args, Set<String> valued, Set<String> flags)
      throws UsageException {
    return parse(args, valued, flags, Set.of());
  }

  /**
   * @param valued options that take a value
   * @param flags options that take none
   * @param repeatable options among {@code valued} that may be given more than once, each value
   *     kept in order
   */
  public static Arguments parse(
      String[] args, Set<String> valued, Set<String> flags, Set<String> repeatable)
      throws UsageException {
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, List<String>> repeated = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String word = args[i];
      if (!word.startsWith("--") || word.length() == 2) {
        throw new UsageException("unexpected argument '" + word + "'");
      }
      String name = word.substring(2);
      String value = null;
      int equals = name.indexOf('=');
      if (equals >= 0) {
        value = name.substring(equals + 1);
        name = name.substring(0, equals);
      }
      if (flags.contains(name)) {
        if (value != null) {
          throw new UsageException("--" + name + " takes no value");
        }
        value = "true";
      } else if (valued.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
            throw new UsageException("--" + name + " needs a value");
          }
          value = args[++i];
        }
      } else {
        throw new UsageException("unknown option --" + name);
      }
      repeated.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
      if (values.put(name, value) != null && !repeatable.contains(name)) {
        throw new UsageException("--" + name + " given twice");
      }
    }
    return new Arguments(values, repeated);
  }

  /** Every value of an option, in the order given; empty when it was not given. */
  public List<String> values(String name) {
    return List.copyOf(repeated.getOrDefault(name, List.of()));
  }

  public boolean flag(String name) {
    return values.containsKey(name);
  }

  public Optional<String> value(String name) {
    return Optional.ofNullable(values.get(name));
  }

  public String required(String name) throws UsageException {
    String value = values.get(name);
    if (value == null || value.isBlank()) {
      throw new UsageException("--" + name + " is required");
    }
    return value;
  }

  public long longValue(String name, long fallback, long min, long max) throws UsageException {
    String raw = values.get(name);
    if (raw == null) {
      return fallback;
    }
    long value;
    try {
      value = Long.parseLong(raw.strip().replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a whole number, was '" + raw + "'");
    }
    if (value < min || value > max) {
      throw new UsageException(
          "--" + name + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  public double doubleValue(String name, double fallback, double min) throws UsageException {
    String raw = values.get(name);
    if (raw == null) {
      return fallback;
    }
    double value;
    try {
      value = Double.parseDouble(raw.strip());
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a number, was '" + raw + "'");
    }
    if (!(value >= min) || Double.isInfinite(value)) {
      throw new UsageException("--" + name + " must be a finite number >= " + min + ", was " + raw);
    }
    return value;
  }
}

package io.kvguard.probe;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A strict reader of the Prometheus text exposition format (also the sample lines of OpenMetrics).
 * No maintained Java library parses this format (the Prometheus Java client only writes it), so
 * kvguard keeps this small one. A malformed line fails the whole answer: a half-read metrics page
 * is not evidence.
 *
 * <p>Engine pages are read as they stream in ({@link #read}): every line is parsed and checked, and
 * only the samples of the families a probe names are kept, so what a page costs is bounded by what
 * the probe reads ({@link #MAX_KEPT_SAMPLES}, {@link #MAX_KEPT_BYTES}, {@link #MAX_LINE_BYTES}),
 * not by the page.
 */
public final class PrometheusText {
  /**
   * Longest line read; vLLM's cache_config_info, the longest line a probe reads, is under 2 KiB.
   */
  static final int MAX_LINE_BYTES = 64 * 1024;

  /**
   * Samples kept from one page: vLLM keeps one per data-parallel engine, Triton a few per model.
   */
  static final int MAX_KEPT_SAMPLES = 4096;

  /** Bytes of the kept lines of one page. */
  static final int MAX_KEPT_BYTES = 256 * 1024;

  /** Distinct values a census keeps (vLLM: one per data-parallel engine). */
  static final int MAX_CENSUS_VALUES = 1024;

  /** One sample line. {@code value} may be NaN or infinite; callers decide what that means. */
  public record Sample(String name, Map<String, String> labels, double value) {}

  /**
   * What a streamed read kept: the named families' samples in page order, the census's distinct
   * values, and whether any sample's name had the census's prefix at all.
   */
  record Kept(List<Sample> samples, Set<String> census, boolean prefixSeen) {}

  private PrometheusText() {}

  /**
   * Reads a page line by line from {@code in}, keeping the samples of {@code reading}'s families
   * and its census. A malformed or over-long line, or more kept than the bounds allow, fails the
   * page.
   */
  static Kept read(InputStream in, Reading reading) throws IOException, ProbeException {
    return read(in, reading.metricFamilies(), reading.censusPrefix(), reading.censusLabel());
  }

  /** {@code families} null: every sample is kept (a small answer read without a selection). */
  static Kept read(InputStream in, Set<String> families, String censusPrefix, String censusLabel)
      throws IOException, ProbeException {
    List<Sample> kept = new ArrayList<>();
    Set<String> census = new LinkedHashSet<>();
    long keptBytes = 0;
    boolean prefixSeen = false;
    byte[] line = new byte[256];
    byte[] chunk = new byte[8192];
    int length = 0;
    int lineNumber = 1;
    boolean atEnd = false;
    while (!atEnd) {
      int read = in.read(chunk);
      atEnd = read < 0;
      int count = Math.max(read, 0);
      for (int i = 0; i <= count; i++) {
        boolean endOfLine = i < count ? chunk[i] == '\n' : atEnd;
        if (i == count && !atEnd) {
          break;
        }
        if (!endOfLine) {
          if (length == MAX_LINE_BYTES) {
            throw new ProbeException(
                "metrics line " + lineNumber + " is longer than " + MAX_LINE_BYTES + " bytes");
          }
          if (length == line.length) {
            line = java.util.Arrays.copyOf(line, Math.min(line.length * 2, MAX_LINE_BYTES));
          }
          line[length++] = chunk[i];
          continue;
        }
        String text = new String(line, 0, length, StandardCharsets.UTF_8);
        if (text.endsWith("\r")) {
          text = text.substring(0, text.length() - 1);
        }
        if (!text.isBlank() && !text.startsWith("#")) {
          Sample sample = parseLine(text.strip(), lineNumber);
          if (families == null || families.contains(sample.name())) {
            keptBytes += length;
            if (kept.size() == MAX_KEPT_SAMPLES || keptBytes > MAX_KEPT_BYTES) {
              throw new ProbeException(
                  "metrics page has more series of "
                      + (families == null ? "all metrics" : String.join(", ", families))
                      + " than kvguard keeps ("
                      + MAX_KEPT_SAMPLES
                      + " series, "
                      + MAX_KEPT_BYTES
                      + " bytes)");
            }
            kept.add(sample);
          }
          boolean inCensus = censusPrefix != null && sample.name().startsWith(censusPrefix);
          prefixSeen |= inCensus;
          String value = censusLabel == null || !inCensus ? null : sample.labels().get(censusLabel);
          if (value != null && census.add(value) && census.size() > MAX_CENSUS_VALUES) {
            throw new ProbeException(
                "metrics page has more than "
                    + MAX_CENSUS_VALUES
                    + " distinct "
                    + censusLabel
                    + " labels on "
                    + censusPrefix
                    + " series");
          }
        }
        length = 0;
        lineNumber++;
      }
    }
    return new Kept(
        Collections.unmodifiableList(kept), Collections.unmodifiableSet(census), prefixSeen);
  }

  public static List<Sample> parse(String text) throws ProbeException {
    List<Sample> samples = new ArrayList<>();
    int lineNumber = 0;
    for (String raw : text.split("\n", -1)) {
      lineNumber++;
      String line = raw.endsWith("\r") ? raw.substring(0, raw.length() - 1) : raw;
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      samples.add(parseLine(line.strip(), lineNumber));
    }
    return samples;
  }

  /**
   * The samples of a Prometheus text answer that its {@link Reading} kept; any other content type
   * is an error naming the path.
   */
  public static List<Sample> parse(EngineResponse response) throws ProbeException {
    return kept(response).samples();
  }

  /** The distinct values of the census label the answer's {@link Reading} asked for. */
  public static Set<String> census(EngineResponse response) throws ProbeException {
    return kept(response).census();
  }

  /** Whether any sample's name had the census prefix the answer's {@link Reading} asked for. */
  public static boolean prefixSeen(EngineResponse response) throws ProbeException {
    return kept(response).prefixSeen();
  }

  private static Kept kept(EngineResponse response) throws ProbeException {
    if (!response.isPrometheusText()) {
      throw new ProbeException(
          "GET "
              + response.path()
              + " answered content type "
              + EngineText.safe(response.contentType())
              + ", expected Prometheus text");
    }
    return response.prometheus();
  }

  public static List<Sample> named(List<Sample> samples, String name) {
    List<Sample> matching = new ArrayList<>();
    for (Sample sample : samples) {
      if (sample.name().equals(name)) {
        matching.add(sample);
      }
    }
    return matching;
  }

  private static Sample parseLine(String line, int lineNumber) throws ProbeException {
    int i = 0;
    while (i < line.length() && isNameChar(line.charAt(i), i == 0)) {
      i++;
    }
    if (i == 0) {
      throw malformed(lineNumber, "no metric name");
    }
    String name = line.substring(0, i);
    Map<String, String> labels = new LinkedHashMap<>();
    if (i < line.length() && line.charAt(i) == '{') {
      i = parseLabels(line, i + 1, labels, lineNumber);
    }
    String rest = line.substring(i).strip();
    if (rest.isEmpty()) {
      throw malformed(lineNumber, "no value");
    }
    String[] parts = rest.split("\\s+");
    if (parts.length > 2) {
      throw malformed(lineNumber, "unexpected text after the value");
    }
    return new Sample(name, Collections.unmodifiableMap(labels), parseValue(parts[0], lineNumber));
  }

  private static int parseLabels(String line, int start, Map<String, String> labels, int lineNumber)
      throws ProbeException {
    int i = start;
    while (true) {
      while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == ',')) {
        i++;
      }
      if (i >= line.length()) {
        throw malformed(lineNumber, "unterminated label set");
      }
      if (line.charAt(i) == '}') {
        return i + 1;
      }
      int nameStart = i;
      while (i < line.length()
          && isNameChar(line.charAt(i), i == nameStart)
          && line.charAt(i) != ':') {
        i++;
      }
      String label = line.substring(nameStart, i);
      if (label.isEmpty() || i >= line.length() || line.charAt(i) != '=') {
        throw malformed(lineNumber, "bad label name");
      }
      i++;
      if (i >= line.length() || line.charAt(i) != '"') {
        throw malformed(lineNumber, "label value not quoted");
      }
      i++;
      StringBuilder value = new StringBuilder();
      boolean closed = false;
      while (i < line.length()) {
        char c = line.charAt(i++);
        if (c == '\\' && i < line.length()) {
          char escaped = line.charAt(i++);
          value.append(escaped == 'n' ? '\n' : escaped);
        } else if (c == '"') {
          closed = true;
          break;
        } else {
          value.append(c);
        }
      }
      if (!closed) {
        throw malformed(lineNumber, "unterminated label value");
      }
      if (labels.put(label, value.toString()) != null) {
        throw malformed(lineNumber, "label " + label + " repeated");
      }
    }
  }

  private static double parseValue(String token, int lineNumber) throws ProbeException {
    switch (token) {
      case "NaN":
        return Double.NaN;
      case "+Inf":
      case "Inf":
        return Double.POSITIVE_INFINITY;
      case "-Inf":
        return Double.NEGATIVE_INFINITY;
      default:
        try {
          return Double.parseDouble(token);
        } catch (NumberFormatException e) {
          throw malformed(lineNumber, "value is not a number");
        }
    }
  }

  private static boolean isNameChar(char c, boolean first) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || c == '_'
        || c == ':'
        || (!first && c >= '0' && c <= '9');
  }

  private static ProbeException malformed(int lineNumber, String what) {
    return new ProbeException("metrics line " + lineNumber + " is malformed: " + what);
  }

  /**
   * A sample value as a token count: finite, whole, positive and exactly representable (below
   * 2^53), or an error naming the metric.
   */
  public static long tokens(double value, String what) throws ProbeException {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      throw new ProbeException(what + " is " + value);
    }
    if (value != Math.rint(value)) {
      throw new ProbeException(what + " is not a whole number");
    }
    if (value <= 0) {
      throw new ProbeException(what + " is " + (long) value + ", expected a positive token count");
    }
    if (value >= 0x1p53) {
      throw new ProbeException(what + " is too large to be exact");
    }
    return (long) value;
  }

  /** A label value as a token count (vLLM's cache_config_info carries numbers as label strings). */
  public static long tokens(String labelValue, String what) throws ProbeException {
    if (labelValue == null) {
      throw new ProbeException(what + " is missing");
    }
    if (!labelValue.matches("[0-9]{1,18}")) {
      throw new ProbeException(what + " is not a positive whole number");
    }
    long tokens = Long.parseLong(labelValue);
    if (tokens <= 0) {
      throw new ProbeException(what + " is 0, expected a positive token count");
    }
    return tokens;
  }
}

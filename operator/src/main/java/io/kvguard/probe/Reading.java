package io.kvguard.probe;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a probe keeps of one engine answer, decided before the answer arrives: the answer is parsed
 * as it streams in and everything else is dropped on the way, so a hostile engine's page costs the
 * operator the few values the probe reads, not the page (issue 20: a 4 MiB page of one-sample lines
 * used to retain about 160 MiB).
 *
 * <ul>
 *   <li>JSON: the values at the given paths. A path is a JSON pointer whose {@code *} segment
 *       stands for every element of an array or every field of an object (TensorRT-LLM keys its
 *       windows by size); each object on the way keeps only the fields a path names, each array
 *       every element (so indexes and sizes stay true). A value of the wrong kind on a path is kept
 *       as it is (a scalar) or as an empty container of its own kind, so a probe still sees and
 *       names the mistake.
 *   <li>Prometheus text: the samples of the named metric families, and optionally the distinct
 *       values one label takes across the families starting with a prefix (a census). Every line is
 *       still parsed strictly: a malformed line fails the whole answer.
 *   <li>Anything else (and the default): the first {@link #RAW_HEAD_BYTES} bytes, the length and a
 *       SHA-256 of the whole answer. JSON or Prometheus text parsed from such a head fails when the
 *       answer was longer.
 * </ul>
 */
public final class Reading {
  /**
   * Bytes of an answer kept as such when no structure is selected: error bodies, versions, small
   * answers.
   */
  public static final int RAW_HEAD_BYTES = 64 * 1024;

  private static final Reading RAW = new Reading(List.of(), Set.of(), null, null);

  private final List<JsonPath> jsonPaths;
  private final Set<String> metricFamilies;
  private final String censusPrefix;
  private final String censusLabel;

  private Reading(
      List<JsonPath> jsonPaths,
      Set<String> metricFamilies,
      String censusPrefix,
      String censusLabel) {
    this.jsonPaths = List.copyOf(jsonPaths);
    this.metricFamilies = Set.copyOf(metricFamilies);
    this.censusPrefix = censusPrefix;
    this.censusLabel = censusLabel;
  }

  /** Keep the head of the answer (up to {@link #RAW_HEAD_BYTES}), its length and its SHA-256. */
  public static Reading raw() {
    return RAW;
  }

  /** Keep the JSON values at these paths ({@code *}: every array element or object field). */
  public static Reading json(String... paths) {
    return RAW.andJson(paths);
  }

  /** Keep the samples of these Prometheus metric families. */
  public static Reading metrics(String... families) {
    return RAW.andMetrics(families);
  }

  public Reading andJson(String... paths) {
    List<JsonPath> all = new ArrayList<>(jsonPaths);
    for (String path : paths) {
      all.add(JsonPath.withWildcards(path));
    }
    return new Reading(all, metricFamilies, censusPrefix, censusLabel);
  }

  /**
   * Adds exact JSON pointers (RFC 6901: {@code *} is a key like any other), e.g. from a generic
   * probe's spec.
   */
  public Reading andJsonPointers(List<String> pointers) {
    List<JsonPath> all = new ArrayList<>(jsonPaths);
    for (String pointer : pointers) {
      all.add(JsonPath.exact(pointer));
    }
    return new Reading(all, metricFamilies, censusPrefix, censusLabel);
  }

  public Reading andMetrics(String... families) {
    Set<String> all = new LinkedHashSet<>(metricFamilies);
    all.addAll(List.of(families));
    return new Reading(jsonPaths, all, censusPrefix, censusLabel);
  }

  /**
   * Also collect the distinct values of {@code label} on every sample whose name starts with {@code
   * namePrefix}.
   */
  public Reading withCensus(String namePrefix, String label) {
    return new Reading(jsonPaths, metricFamilies, namePrefix, label);
  }

  boolean selectsJson() {
    return !jsonPaths.isEmpty();
  }

  boolean selectsMetrics() {
    return !metricFamilies.isEmpty() || censusLabel != null;
  }

  List<JsonPath> jsonPaths() {
    return jsonPaths;
  }

  Set<String> metricFamilies() {
    return metricFamilies;
  }

  String censusPrefix() {
    return censusPrefix;
  }

  String censusLabel() {
    return censusLabel;
  }

  /** One selected JSON path: property names, array indexes written as names, and wildcards. */
  record JsonPath(List<Segment> segments) {

    /**
     * A path segment: {@code name} matches an object field (or the array index it spells); a
     * wildcard any.
     */
    record Segment(String name, boolean any) {
      boolean matchesField(String field) {
        return any || name.equals(field);
      }

      boolean matchesIndex(int index) {
        return any || name.equals(String.valueOf(index));
      }
    }

    static JsonPath withWildcards(String path) {
      return parse(path, true);
    }

    static JsonPath exact(String pointer) {
      return parse(pointer, false);
    }

    private static JsonPath parse(String path, boolean wildcards) {
      if (!path.isEmpty() && !path.startsWith("/")) {
        throw new IllegalArgumentException("a JSON path starts with /: " + path);
      }
      List<Segment> segments = new ArrayList<>();
      if (!path.isEmpty()) {
        for (String raw : path.substring(1).split("/", -1)) {
          String name = raw.replace("~1", "/").replace("~0", "~");
          segments.add(new Segment(name, wildcards && raw.equals("*")));
        }
      }
      return new JsonPath(List.copyOf(segments));
    }

    boolean isComplete(int depth) {
      return depth == segments.size();
    }

    Segment at(int depth) {
      return segments.get(depth);
    }
  }
}

package io.kvguard.probe;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.customresource.GenericVersionSource;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.ProbeOutcome;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * Any other engine, read where the role's {@code generic} settings say: a JSON pointer into a JSON
 * answer or a Prometheus sample (with exact label matchers), times a whole multiplier, for the pool
 * and optionally the engine context; a JSON pointer for the version. Each path is fetched once per
 * probe. Whatever the settings name but the answer lacks fails the probe, naming the pointer or
 * metric.
 */
public final class GenericProbe implements EngineProbe {
  private final EngineHttp http;
  private final GenericProbeSpec spec;

  /**
   * {@code spec} may be null (a spec the CRD did not validate); the probe then fails, saying so.
   */
  public GenericProbe(EngineHttp http, GenericProbeSpec spec) {
    this.http = http;
    this.spec = spec;
  }

  @Override
  public Engine engine() {
    return Engine.GENERIC;
  }

  @Override
  public ProbeOutcome read(EngineEndpoint endpoint) throws ProbeException {
    if (spec == null || spec.getPath() == null || spec.getPool() == null) {
      throw new ProbeException("engine generic needs the role's generic settings: path and pool");
    }
    Answers answers = new Answers(endpoint);
    List<String> notes = new ArrayList<>();
    long pool = tokens(spec.getPool(), answers, true, notes);
    notes.add("pool from GET " + pathOf(spec.getPool().getPath()) + " " + describe(spec.getPool()));
    OptionalLong engineContext = OptionalLong.empty();
    if (spec.getEngineContext() != null) {
      engineContext = OptionalLong.of(tokens(spec.getEngineContext(), answers, false, notes));
    } else {
      notes.add("generic settings name no engineContext: EngineContextExceedsPool is not checked");
    }
    String version = spec.getVersion() == null ? null : version(spec.getVersion(), answers);
    return ProbeOutcome.observed(new PoolObservation(pool, engineContext, version, null, notes));
  }

  private long tokens(
      GenericValueSource source, Answers answers, boolean isPool, List<String> notes)
      throws ProbeException {
    String path = pathOf(source.getPath());
    long multiplier = source.effectiveMultiplier();
    if (multiplier < 1) {
      throw new ProbeException("generic multiplier must be a whole number >= 1");
    }
    long value;
    if (source.getJsonPointer() != null && source.getMetric() == null) {
      value =
          StrictJson.tokens(
              at(answers.json(path), source.getJsonPointer(), path),
              "GET " + path + " " + describe(source));
    } else if (source.getMetric() != null && source.getJsonPointer() == null) {
      value = metric(answers.prometheus(path), source, path, isPool, notes);
    } else {
      throw new ProbeException(
          "generic "
              + (isPool ? "pool" : "engineContext")
              + " must set exactly one of jsonPointer or metric");
    }
    try {
      return Math.multiplyExact(value, multiplier);
    } catch (ArithmeticException e) {
      throw new ProbeException(
          "GET " + path + " " + describe(source) + " × multiplier " + multiplier + " overflows");
    }
  }

  private static long metric(
      List<PrometheusText.Sample> samples,
      GenericValueSource source,
      String path,
      boolean isPool,
      List<String> notes)
      throws ProbeException {
    Map<String, String> wanted = source.effectiveLabels();
    List<PrometheusText.Sample> matching =
        PrometheusText.named(samples, source.getMetric()).stream()
            .filter(
                s ->
                    wanted.entrySet().stream()
                        .allMatch(w -> w.getValue().equals(s.labels().get(w.getKey()))))
            .toList();
    String what = "GET " + path + " " + describe(source);
    if (matching.isEmpty()) {
      throw new ProbeException(what + " matches no series");
    }
    if (!isPool && matching.size() > 1) {
      throw new ProbeException(
          what + " matches " + matching.size() + " series; add labels so exactly one remains");
    }
    long smallest = Long.MAX_VALUE;
    Map<Map<String, String>, Long> byLabels = new HashMap<>();
    for (PrometheusText.Sample sample : matching) {
      long tokens = PrometheusText.tokens(sample.value(), what);
      Long previous = byLabels.put(sample.labels(), tokens);
      if (previous != null && previous != tokens) {
        // The same series twice with two figures: neither can be trusted, and the smaller may not
        // be the truth.
        throw new ProbeException(what + " has duplicate series that disagree");
      }
      smallest = Math.min(smallest, tokens);
    }
    if (matching.size() > 1) {
      notes.add(
          "pool is the smallest of " + matching.size() + " series matching " + describe(source));
    }
    return smallest;
  }

  private String version(GenericVersionSource source, Answers answers) throws ProbeException {
    if (source.getJsonPointer() == null) {
      throw new ProbeException("generic version needs a jsonPointer");
    }
    String path = pathOf(source.getPath());
    JsonNode node = at(answers.json(path), source.getJsonPointer(), path);
    if (!node.isTextual() && !node.isNumber()) {
      throw new ProbeException(
          "GET " + path + " JSON pointer " + source.getJsonPointer() + " is not a version string");
    }
    return EngineText.version(node.asText());
  }

  private static JsonNode at(JsonNode root, String pointer, String path) throws ProbeException {
    JsonPointer compiled;
    try {
      compiled = JsonPointer.compile(pointer);
    } catch (IllegalArgumentException e) {
      throw new ProbeException(
          "generic jsonPointer " + pointer + " is not a JSON pointer (RFC 6901)");
    }
    JsonNode node = root.at(compiled);
    if (node.isMissingNode()) {
      throw new ProbeException("GET " + path + " JSON pointer " + pointer + " matches nothing");
    }
    if (node.isNull()) {
      throw new ProbeException("GET " + path + " JSON pointer " + pointer + " is null");
    }
    return node;
  }

  private String pathOf(String override) {
    return override == null ? spec.getPath() : override;
  }

  private static String describe(GenericValueSource source) {
    if (source.getJsonPointer() != null) {
      return "JSON pointer " + source.getJsonPointer();
    }
    Map<String, String> labels = new TreeMap<>(source.effectiveLabels());
    return "metric " + source.getMetric() + (labels.isEmpty() ? "" : labels.toString());
  }

  /** What each path's answer is read for: the JSON pointers and metrics the settings name on it. */
  private Map<String, Reading> readings() {
    Map<String, List<String>> pointers = new HashMap<>();
    Map<String, List<String>> metrics = new HashMap<>();
    for (GenericValueSource source :
        java.util.Arrays.asList(spec.getPool(), spec.getEngineContext())) {
      if (source != null) {
        select(
            pathOf(source.getPath()),
            source.getJsonPointer(),
            source.getMetric(),
            pointers,
            metrics);
      }
    }
    if (spec.getVersion() != null) {
      select(
          pathOf(spec.getVersion().getPath()),
          spec.getVersion().getJsonPointer(),
          null,
          pointers,
          metrics);
    }
    Map<String, Reading> readings = new HashMap<>();
    for (String path : union(pointers.keySet(), metrics.keySet())) {
      readings.put(
          path,
          Reading.raw()
              .andJsonPointers(pointers.getOrDefault(path, List.of()))
              .andMetrics(metrics.getOrDefault(path, List.of()).toArray(String[]::new)));
    }
    return readings;
  }

  private static void select(
      String path,
      String pointer,
      String metric,
      Map<String, List<String>> pointers,
      Map<String, List<String>> metrics) {
    if (path == null) {
      return;
    }
    if (pointer != null && isPointer(pointer)) {
      pointers.computeIfAbsent(path, p -> new ArrayList<>()).add(pointer);
    }
    if (metric != null) {
      metrics.computeIfAbsent(path, p -> new ArrayList<>()).add(metric);
    }
  }

  private static boolean isPointer(String pointer) {
    try {
      JsonPointer.compile(pointer);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static java.util.Set<String> union(java.util.Set<String> a, java.util.Set<String> b) {
    java.util.Set<String> all = new java.util.LinkedHashSet<>(a);
    all.addAll(b);
    return all;
  }

  /** The answers of one probe, fetched once per path and read for what the settings name on it. */
  private final class Answers {
    private final EngineEndpoint endpoint;
    private final Map<String, Reading> readings = readings();
    private final Map<String, EngineResponse> responses = new HashMap<>();
    private final Map<String, JsonNode> trees = new HashMap<>();

    Answers(EngineEndpoint endpoint) {
      this.endpoint = endpoint;
    }

    JsonNode json(String path) throws ProbeException {
      JsonNode tree = trees.get(path);
      if (tree == null) {
        tree = StrictJson.parse(response(endpoint, path));
        trees.put(path, tree);
      }
      return tree;
    }

    List<PrometheusText.Sample> prometheus(String path) throws ProbeException {
      // A metric source is a metrics page: served on the role's metricsPort when it names one.
      EngineResponse response = response(endpoint.metrics(), path);
      if (response.isPrometheusText() && response.isEmpty()) {
        throw new ProbeException("GET " + path + " answered an empty body");
      }
      return PrometheusText.parse(response);
    }

    private EngineResponse response(EngineEndpoint from, String path) throws ProbeException {
      String key = from.baseUri() + path;
      EngineResponse response = responses.get(key);
      if (response == null) {
        requireSameOrigin(from, path);
        response = http.getOk(from, path, readings.getOrDefault(path, Reading.raw()));
        responses.put(key, response);
      }
      return response;
    }
  }

  /**
   * The CRD's pattern already forbids it; this is the same check for specs that skipped validation.
   */
  static void requireSameOrigin(EngineEndpoint endpoint, String path) throws ProbeException {
    URI resolved;
    try {
      resolved = path.startsWith("/") && !path.startsWith("//") ? endpoint.resolve(path) : null;
    } catch (IllegalArgumentException e) {
      resolved = null;
    }
    if (resolved == null
        || !Objects.equals(resolved.getRawAuthority(), endpoint.baseUri().getRawAuthority())
        || !Objects.equals(resolved.getScheme(), endpoint.baseUri().getScheme())) {
      throw new ProbeException(
          "generic path must be an absolute path on the engine (one leading /)");
    }
  }
}

package io.kvguard.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every metric kvguard exports. Per-pod gauges are removed when the pod leaves a ModelDeployment,
 * and every meter of a ModelDeployment (windows, pods, per-role counters and timers) when it is
 * deleted, so neither pod churn nor policies created and deleted under new names grow the registry.
 */
public final class KvguardMetrics {
  /** Prometheus names, exactly as scraped. */
  public static final String POD_KV_POOL_TOKENS = "kvguard_pod_kv_pool_tokens";

  public static final String POD_VERIFIED = "kvguard_pod_verified";
  public static final String CONTEXT_WINDOW_TOKENS = "kvguard_context_window_tokens";
  public static final String GATE_TRANSITIONS_TOTAL = "kvguard_gate_transitions_total";
  public static final String PROBE_DURATION_SECONDS = "kvguard_probe_duration_seconds";
  public static final String PROBE_FAILURES_TOTAL = "kvguard_probe_failures_total";
  public static final String BUILD_INFO = "kvguard_build_info";
  public static final String REJECTION_PROBES_TOTAL = "kvguard_rejection_probes_total";
  public static final String GATE_WRITE_FAILURES_TOTAL = "kvguard_gate_write_failures_total";
  public static final String EVENT_WRITES_TOTAL = "kvguard_event_writes_total";
  public static final String ENGINE_ADVISORY_WARNINGS = "kvguard_engine_advisory_warnings";
  public static final String LABEL_ONLY_PODS = "kvguard_label_only_pods";
  public static final String UNREADABLE_MODELDEPLOYMENTS = "kvguard_unreadable_modeldeployments";
  public static final String STRANDED_PODS = "kvguard_stranded_pods";
  public static final String UNWATCHED_NAMESPACES = "kvguard_unwatched_namespaces";
  public static final String PROBES_HUNG = "kvguard_probes_hung";
  public static final String REJECTION_PROBES_HUNG = "kvguard_rejection_probes_hung";
  public static final List<String> ALL =
      List.of(
          POD_KV_POOL_TOKENS,
          POD_VERIFIED,
          CONTEXT_WINDOW_TOKENS,
          GATE_TRANSITIONS_TOTAL,
          PROBE_DURATION_SECONDS,
          PROBE_FAILURES_TOTAL,
          BUILD_INFO,
          REJECTION_PROBES_TOTAL,
          GATE_WRITE_FAILURES_TOTAL,
          EVENT_WRITES_TOTAL,
          ENGINE_ADVISORY_WARNINGS,
          LABEL_ONLY_PODS,
          UNREADABLE_MODELDEPLOYMENTS,
          STRANDED_PODS,
          UNWATCHED_NAMESPACES,
          PROBES_HUNG,
          REJECTION_PROBES_HUNG);

  private final MeterRegistry registry;
  private final Map<Tags, AtomicLong> poolTokens = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> verified = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> windows = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> advisoryWarnings = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> labelOnly = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> unreadable = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> stranded = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> unwatched = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> hungProbes = new ConcurrentHashMap<>();
  private final Map<Tags, AtomicLong> hungRejectionProbes = new ConcurrentHashMap<>();

  public KvguardMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("kvguard.build.info", () -> 1)
        .description("kvguard build; the value is always 1")
        .tag("version", BuildInfo.version())
        .register(registry);
  }

  public static Tags podTags(String namespace, String modelDeployment, String role, String pod) {
    return Tags.of(
        "namespace", namespace, "modeldeployment", modelDeployment, "role", role, "pod", pod);
  }

  public static Tags roleTags(String namespace, String modelDeployment, String role) {
    return Tags.of("namespace", namespace, "modeldeployment", modelDeployment, "role", role);
  }

  public void contextWindow(String namespace, String modelDeployment, long tokens) {
    gauge(
            windows,
            "kvguard.context.window.tokens",
            "Context window the ModelDeployment promises, in tokens",
            Tags.of("namespace", namespace, "modeldeployment", modelDeployment))
        .set(tokens);
  }

  /**
   * Records a pod's latest figures; {@code poolTokens} < 0 means not measured (the series is
   * removed).
   */
  public void pod(Tags podTags, long poolTokens, boolean isVerified) {
    if (poolTokens >= 0) {
      gauge(
              this.poolTokens,
              "kvguard.pod.kv.pool.tokens",
              "Measured KV pool of the pod (smallest rank), in tokens",
              podTags)
          .set(poolTokens);
    } else {
      remove(this.poolTokens, "kvguard.pod.kv.pool.tokens", podTags);
    }
    gauge(
            verified,
            "kvguard.pod.verified",
            "1 when the pod's current engine container passed, else 0",
            podTags)
        .set(isVerified ? 1 : 0);
  }

  public void forgetPod(Tags podTags) {
    remove(poolTokens, "kvguard.pod.kv.pool.tokens", podTags);
    remove(verified, "kvguard.pod.verified", podTags);
  }

  public void forgetModelDeployment(String namespace, String modelDeployment) {
    Tags tags = Tags.of("namespace", namespace, "modeldeployment", modelDeployment);
    remove(windows, "kvguard.context.window.tokens", tags);
    for (Tags podTags : List.copyOf(verified.keySet())) {
      if (sameDeployment(podTags, namespace, modelDeployment)) {
        forgetPod(podTags);
      }
    }
    for (Tags advisoryTags : List.copyOf(advisoryWarnings.keySet())) {
      if (sameDeployment(advisoryTags, namespace, modelDeployment)) {
        remove(advisoryWarnings, "kvguard.engine.advisory.warnings", advisoryTags);
      }
    }
    for (Tags roleTags : List.copyOf(labelOnly.keySet())) {
      if (sameDeployment(roleTags, namespace, modelDeployment)) {
        remove(labelOnly, "kvguard.label.only.pods", roleTags);
      }
    }
    poolTokens.keySet().removeIf(podTags -> sameDeployment(podTags, namespace, modelDeployment));
    // Per-role counters and timers (gate transitions, probe durations and failures, rejection
    // probes) and the policy's failed gate writes. A pod it could not hand back is not forgotten
    // with them: it is counted by kvguard_stranded_pods for as long as it carries the gate.
    for (Meter meter : List.copyOf(registry.getMeters())) {
      Meter.Id id = meter.getId();
      if (id.getName().startsWith("kvguard.")
          && namespace.equals(id.getTag("namespace"))
          && modelDeployment.equals(id.getTag("modeldeployment"))) {
        registry.remove(meter);
      }
    }
  }

  /**
   * Pods of a role whose spec lacks the kvguard.io/pool-verified readiness gate: only the routing
   * label holds them back (created before the policy selected them, or admitted while the webhook
   * did not answer).
   */
  public void labelOnlyPods(Tags roleTags, long pods) {
    gauge(
            labelOnly,
            "kvguard.label.only.pods",
            "Selected pods without the kvguard.io/pool-verified readiness gate:"
                + " only the kvguard.io/verified label holds them back",
            roleTags)
        .set(pods);
  }

  /**
   * ModelDeployments of a namespace whose stored spec or status kvguard cannot read (issue 29). A
   * namespace's series exists only while it has one, so namespaces never grow the registry.
   */
  public void unreadableModelDeployments(String namespace, long count) {
    namespaceGauge(
        unreadable,
        "kvguard.unreadable.modeldeployments",
        "ModelDeployments whose stored spec or status kvguard cannot read: it applies none of"
            + " them (the pods they gated stay shut) until they are fixed or deleted",
        namespace,
        count);
  }

  /**
   * A namespace of {@code watchNamespaces} whose ModelDeployments (or pods) kvguard may not list or
   * watch (HTTP 403): 1 while an informer there is refused, or from a start that left the namespace
   * out until a start watches it; no series otherwise.
   */
  public void unwatchedNamespace(String namespace, boolean leftOut) {
    namespaceGauge(
        unwatched,
        "kvguard.unwatched.namespaces",
        "A namespace kvguard is configured to watch but may not list or watch ModelDeployments or"
            + " pods in (HTTP 403): its pods' gates are not kept",
        namespace,
        leftOut ? 1 : 0);
  }

  /** Pods of a role an engine advisory applies to that only warns (no fixed release verified). */
  public void advisoryWarning(
      String namespace, String modelDeployment, String role, String advisory, long pods) {
    gauge(
            advisoryWarnings,
            "kvguard.engine.advisory.warnings",
            "Pods an engine advisory without a verified fixed"
                + " release applies to (it warns instead of refusing)",
            roleTags(namespace, modelDeployment, role).and("advisory", advisory))
        .set(pods);
  }

  public void forgetAdvisoryWarning(
      String namespace, String modelDeployment, String role, String advisory) {
    remove(
        advisoryWarnings,
        "kvguard.engine.advisory.warnings",
        roleTags(namespace, modelDeployment, role).and("advisory", advisory));
  }

  public void gateTransition(Tags roleTags, boolean open) {
    Counter.builder("kvguard.gate.transitions")
        .description("Flips of the kvguard.io/pool-verified pod condition")
        .tags(roleTags)
        .tag("status", open ? "True" : "False")
        .register(registry)
        .increment();
  }

  public void probe(Tags roleTags, String engine, Duration took, boolean failed) {
    Timer.builder("kvguard.probe.duration")
        .description("Time one engine probe took, all requests included")
        .tags(roleTags)
        .tag("engine", engine)
        .register(registry)
        .record(took);
    if (failed) {
      Counter.builder("kvguard.probe.failures")
          .description("Probes that could not establish an engine's figures")
          .tags(roleTags)
          .tag("engine", engine)
          .register(registry)
          .increment();
    }
  }

  /**
   * One rejection probe; {@code result} is refused (safe), answered (unsafe), inconclusive or
   * failed.
   */
  public void rejectionProbe(Tags roleTags, String engine, String result) {
    Counter.builder("kvguard.rejection.probes")
        .description("Over-limit prompts sent by the rejection probe, by what the engine did")
        .tags(roleTags)
        .tag("engine", engine)
        .tag("result", result)
        .register(registry)
        .increment();
  }

  /**
   * A gate write of a pass the API server refused for good: the gate stays as it was and the write
   * is tried again. The tag {@code during} is always {@code pass}: a failed hand-back of a deleted
   * policy is no longer counted per policy (one series per deleted policy, forever, issue 28 §2),
   * the pod it left is counted by {@link #strandedPods} while it lasts.
   */
  public void gateWriteFailure(String namespace, String modelDeployment) {
    Counter.builder("kvguard.gate.write.failures")
        .description("Pod gate writes of a pass the API server refused after retries")
        .tags("namespace", namespace, "modeldeployment", modelDeployment, "during", "pass")
        .register(registry)
        .increment();
  }

  /**
   * Pods of a namespace that carry the gate of a ModelDeployment that is gone (its hand-back
   * failed) and that no ModelDeployment selects. A namespace's series exists only while it has one,
   * so neither policies nor namespaces coming and going grow the registry.
   */
  public void strandedPods(String namespace, long pods) {
    namespaceGauge(
        stranded,
        "kvguard.stranded.pods",
        "Pods still carrying the kvguard.io/pool-verified condition, kvguard.io/verified label"
            + " and verdict record of a deleted ModelDeployment that could not hand them back,"
            + " and selected by none",
        namespace,
        pods);
  }

  /**
   * Probes of a namespace running past the hung threshold, on the hung budget
   * (KVGUARD_HUNG_PROBE_LIMIT). A namespace's series exists only while it has one.
   */
  public void hungProbes(String namespace, long probes) {
    namespaceGauge(
        hungProbes,
        "kvguard.probes.hung",
        "Engine probes running past the hung threshold, counted on the hung budget instead of"
            + " their namespace's share of the probe threads",
        namespace,
        probes);
  }

  /**
   * Rejection probes of a namespace (router proofs included) running past the hung threshold, on
   * the rejection probes' own hung budget (KVGUARD_HUNG_PROBE_LIMIT, one per namespace). A sibling
   * of {@link #hungProbes}, not a label on it: its series stay as they were. A namespace's series
   * exists only while it has one.
   */
  public void hungRejectionProbes(String namespace, long probes) {
    namespaceGauge(
        hungRejectionProbes,
        "kvguard.rejection.probes.hung",
        "Rejection probes running past the hung threshold, counted on the rejection probes'"
            + " hung budget instead of the rejection probe threads",
        namespace,
        probes);
  }

  /** The namespaces that have a {@link #strandedPods} series now. */
  public java.util.Set<String> strandedNamespaces() {
    java.util.Set<String> namespaces = new java.util.TreeSet<>();
    stranded.keySet().forEach(tags -> namespaces.add(tags.stream().findFirst().get().getValue()));
    return namespaces;
  }

  /**
   * The Event-write counters of a ModelDeployment that is gone and whose last Events are written.
   */
  public void forgetEventWrites(String namespace, String modelDeployment) {
    registry
        .find("kvguard.event.writes")
        .tags("namespace", namespace, "modeldeployment", modelDeployment)
        .meters()
        .forEach(registry::remove);
  }

  /**
   * One attempt to write a ModelDeployment's Event; {@code outcome} is created, patched, retried
   * (refused or unanswered, tried again later) or dropped (given up: the transitions it carried
   * were not announced).
   */
  public void eventWrite(String namespace, String modelDeployment, String outcome) {
    Counter.builder("kvguard.event.writes")
        .description("Writes of kvguard's Kubernetes Events, by outcome")
        .tags("namespace", namespace, "modeldeployment", modelDeployment, "outcome", outcome)
        .register(registry)
        .increment();
  }

  private static boolean sameDeployment(Tags tags, String namespace, String modelDeployment) {
    String ns = null;
    String md = null;
    for (io.micrometer.core.instrument.Tag tag : tags) {
      if (tag.getKey().equals("namespace")) {
        ns = tag.getValue();
      } else if (tag.getKey().equals("modeldeployment")) {
        md = tag.getValue();
      }
    }
    return namespace.equals(ns) && modelDeployment.equals(md);
  }

  /**
   * Sets a namespace's series of a per-namespace gauge, or removes it at 0: a namespace's series
   * exists only while its value is positive, so namespaces never grow the registry.
   */
  private void namespaceGauge(
      Map<Tags, AtomicLong> values, String name, String description, String namespace, long value) {
    Tags tags = Tags.of("namespace", namespace);
    if (value <= 0) {
      remove(values, name, tags);
      return;
    }
    gauge(values, name, description, tags).set(value);
  }

  private AtomicLong gauge(
      Map<Tags, AtomicLong> values, String name, String description, Tags tags) {
    return values.computeIfAbsent(
        tags,
        t -> {
          AtomicLong value = new AtomicLong();
          Gauge.builder(name, value, AtomicLong::get)
              .description(description)
              .tags(t)
              .register(registry);
          return value;
        });
  }

  private void remove(Map<Tags, AtomicLong> values, String name, Tags tags) {
    if (values.remove(tags) != null) {
      // By its id, not by a search: a search reads every meter of the registry (thousands at
      // N = 1,000 pods), and passes remove pods' series (issue 28 §5: pass CPU).
      registry.removeByPreFilterId(new Meter.Id(name, tags, null, null, Meter.Type.GAUGE));
    }
  }
}

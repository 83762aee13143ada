package io.kvguard;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.reconciler.ProbeLimits;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The operator's settings, read once from the environment (public API: the Helm chart sets these).
 *
 * @param namespaces namespaces to watch; empty means all
 * @param metricsPort port of the /metrics server
 * @param leaderElection whether replicas elect a leader before reconciling
 * @param leaseNamespace namespace of the leader-election Lease (null: the operator's own namespace)
 * @param probeConcurrency probes in flight at once, across all ModelDeployments
 * @param probeMaxBodyBytes largest engine answer read; a larger one fails the probe
 * @param identity this replica's name in leases and events
 * @param healthPort port of the /healthz and /readyz server (the kubelet's probes), apart from
 *     /metrics
 * @param metricsBindAddress the address /metrics listens on (0.0.0.0: every interface)
 * @param probeConcurrencyPerNamespace probes in flight at once for the pods of one namespace
 * @param rejectionProbeConcurrency rejection probes in flight at once, on their own threads
 * @param rejectionMaxPromptTokens largest prompt the rejection probe sends; above it the probe is
 *     inconclusive
 * @param verdictKeySecret the Secret (in the operator's own namespace) holding the key that signs
 *     verdict records
 * @param podListConcurrency namespaces whose pods are listed at once, from the start of their pod
 *     informer until its first LIST is in the cache
 * @param hungProbeLimit probes running past the hung threshold that are counted on a budget of
 *     their own instead of their namespace's share of the probe threads (0: none, a probe holds its
 *     thread until it ends)
 */
public record KvguardConfig(
    Set<String> namespaces,
    int metricsPort,
    boolean leaderElection,
    String leaseNamespace,
    int probeConcurrency,
    int probeMaxBodyBytes,
    String identity,
    int healthPort,
    String metricsBindAddress,
    int probeConcurrencyPerNamespace,
    int rejectionProbeConcurrency,
    long rejectionMaxPromptTokens,
    String verdictKeySecret,
    int podListConcurrency,
    int hungProbeLimit) {

  public static final String LEASE_NAME = "kvguard-operator";
  public static final int DEFAULT_HEALTH_PORT = 8081;
  public static final int DEFAULT_PROBE_CONCURRENCY_PER_NAMESPACE = 4;
  public static final int DEFAULT_REJECTION_PROBE_CONCURRENCY = 4;
  public static final String DEFAULT_VERDICT_KEY_SECRET = "kvguard-verdict-key";

  /**
   * One namespace lists at a time: with the chart's 256 MiB heap, ten namespaces of 500 realistic
   * pods listing at once ran out of memory (docs/benchmarks.md).
   */
  public static final int DEFAULT_POD_LIST_CONCURRENCY = 1;

  /**
   * The settings every caller before issue 20 chose; the rest take their defaults (health on an
   * ephemeral port).
   */
  public KvguardConfig(
      Set<String> namespaces,
      int metricsPort,
      boolean leaderElection,
      String leaseNamespace,
      int probeConcurrency,
      int probeMaxBodyBytes,
      String identity) {
    this(
        namespaces,
        metricsPort,
        leaderElection,
        leaseNamespace,
        probeConcurrency,
        probeMaxBodyBytes,
        identity,
        0,
        "0.0.0.0",
        Math.min(probeConcurrency, DEFAULT_PROBE_CONCURRENCY_PER_NAMESPACE),
        DEFAULT_REJECTION_PROBE_CONCURRENCY,
        RejectionProbe.DEFAULT_MAX_PROMPT_TOKENS,
        DEFAULT_VERDICT_KEY_SECRET,
        DEFAULT_POD_LIST_CONCURRENCY,
        ProbeLimits.DEFAULT_HUNG_PROBE_LIMIT);
  }

  public static KvguardConfig fromEnvironment(Map<String, String> env) {
    Set<String> namespaces =
        Arrays.stream(env.getOrDefault("KVGUARD_NAMESPACES", "").split(","))
            .map(String::strip)
            .filter(s -> !s.isEmpty())
            .collect(Collectors.toUnmodifiableSet());
    return new KvguardConfig(
        namespaces,
        intValue(env, "KVGUARD_METRICS_PORT", 8080, 0, 65535),
        Boolean.parseBoolean(env.getOrDefault("KVGUARD_LEADER_ELECTION", "false")),
        blankToNull(env.get("KVGUARD_LEADER_ELECTION_NAMESPACE")),
        intValue(env, "KVGUARD_PROBE_CONCURRENCY", 32, 1, 1024),
        intValue(
            env,
            "KVGUARD_PROBE_MAX_BODY_BYTES",
            EngineHttp.DEFAULT_MAX_BODY_BYTES,
            1024,
            256 * 1024 * 1024),
        env.getOrDefault("POD_NAME", env.getOrDefault("HOSTNAME", "kvguard-local")),
        intValue(env, "KVGUARD_HEALTH_PORT", DEFAULT_HEALTH_PORT, 0, 65535),
        env.getOrDefault("KVGUARD_METRICS_BIND_ADDRESS", "0.0.0.0").strip(),
        intValue(
            env,
            "KVGUARD_PROBE_CONCURRENCY_PER_NAMESPACE",
            DEFAULT_PROBE_CONCURRENCY_PER_NAMESPACE,
            1,
            1024),
        intValue(
            env, "KVGUARD_REJECTION_PROBE_CONCURRENCY", DEFAULT_REJECTION_PROBE_CONCURRENCY, 1, 64),
        intValue(
            env,
            "KVGUARD_REJECTION_MAX_PROMPT_TOKENS",
            (int) RejectionProbe.DEFAULT_MAX_PROMPT_TOKENS,
            1,
            64 * 1024 * 1024),
        Objects.requireNonNullElse(
            blankToNull(env.get("KVGUARD_VERDICT_KEY_SECRET")), DEFAULT_VERDICT_KEY_SECRET),
        intValue(env, "KVGUARD_POD_LIST_CONCURRENCY", DEFAULT_POD_LIST_CONCURRENCY, 1, 64),
        intValue(env, "KVGUARD_HUNG_PROBE_LIMIT", ProbeLimits.DEFAULT_HUNG_PROBE_LIMIT, 0, 4096));
  }

  private static int intValue(Map<String, String> env, String key, int fallback, int min, int max) {
    String raw = env.get(key);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    int value;
    try {
      value = Integer.parseInt(raw.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a whole number, was '" + raw + "'");
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          key + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}

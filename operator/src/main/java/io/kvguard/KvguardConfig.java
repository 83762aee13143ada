package io.kvguard;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The operator's settings, read once from the environment (public API: the Helm chart sets these).
 *
 * @param namespaces namespaces to watch; empty means all
 * @param metricsPort port of the /metrics, /healthz and /readyz server
 * @param leaderElection whether replicas elect a leader before reconciling
 * @param leaseNamespace namespace of the leader-election Lease (null: the operator's own namespace)
 * @param probeConcurrency probes in flight at once, across all ModelDeployments
 * @param identity this replica's name in leases and events
 */
public record KvguardConfig(
    Set<String> namespaces,
    int metricsPort,
    boolean leaderElection,
    String leaseNamespace,
    int probeConcurrency,
    int probeMaxBodyBytes,
    String identity) {

  public static final String LEASE_NAME = "kvguard-operator";

  public static KvguardConfig fromEnvironment(Map<String, String> env) {
    Set<String> namespaces = Arrays.stream(env.getOrDefault("KVGUARD_NAMESPACES", "").split(","))
        .map(String::strip).filter(s -> !s.isEmpty()).collect(Collectors.toUnmodifiableSet());
    return new KvguardConfig(
        namespaces,
        intValue(env, "KVGUARD_METRICS_PORT", 8080, 0, 65535),
        Boolean.parseBoolean(env.getOrDefault("KVGUARD_LEADER_ELECTION", "false")),
        blankToNull(env.get("KVGUARD_LEADER_ELECTION_NAMESPACE")),
        intValue(env, "KVGUARD_PROBE_CONCURRENCY", 32, 1, 1024),
        intValue(env, "KVGUARD_PROBE_MAX_BODY_BYTES", 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
        env.getOrDefault("POD_NAME", env.getOrDefault("HOSTNAME", "kvguard-local")));
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
      throw new IllegalArgumentException(key + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value.strip();
  }
}

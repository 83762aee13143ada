package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.customresource.SecretKeyRef;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bearer tokens for engines, read from Secrets with a short cache (one GET per Secret per minute, not per
 * probe). A token that cannot be read is a failed probe, never an unauthenticated one.
 */
public final class ProbeCredentials {
  private static final Duration TTL = Duration.ofSeconds(60);

  /** The token, or why there is none (safe to show: never contains the value). */
  record Lookup(Optional<String> token, String problem) {}

  private record Cached(Lookup lookup, Instant readAt) {}

  private final KubernetesClient client;
  private final Clock clock;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();

  public ProbeCredentials(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  Lookup token(String namespace, SecretKeyRef ref) {
    if (ref == null) {
      return new Lookup(Optional.empty(), null);
    }
    String cacheKey = namespace + "/" + ref.getName() + "/" + ref.effectiveKey();
    Instant now = clock.instant();
    Cached cached = cache.get(cacheKey);
    if (cached != null && cached.readAt.plus(TTL).isAfter(now)) {
      return cached.lookup;
    }
    Lookup lookup = read(namespace, ref);
    cache.put(cacheKey, new Cached(lookup, now));
    return lookup;
  }

  private Lookup read(String namespace, SecretKeyRef ref) {
    String where = "Secret " + namespace + "/" + ref.getName() + " key " + ref.effectiveKey();
    Secret secret;
    try {
      secret = client.secrets().inNamespace(namespace).withName(ref.getName()).get();
    } catch (KubernetesClientException e) {
      return new Lookup(Optional.empty(), "cannot read " + where + " (HTTP " + e.getCode() + ")");
    }
    if (secret == null) {
      return new Lookup(Optional.empty(), where + " does not exist");
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(ref.effectiveKey());
    if (encoded != null) {
      try {
        String token = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8).strip();
        if (!token.isEmpty()) {
          return new Lookup(Optional.of(token), null);
        }
      } catch (IllegalArgumentException e) {
        return new Lookup(Optional.empty(), where + " is not valid base64");
      }
    }
    String plain = secret.getStringData() == null ? null : secret.getStringData().get(ref.effectiveKey());
    if (plain != null && !plain.isBlank()) {
      return new Lookup(Optional.of(plain.strip()), null);
    }
    return new Lookup(Optional.empty(), where + " is missing or empty");
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.SecretKeyRef;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bearer tokens for engines, read from Secrets and kept while the ModelDeployments that name them
 * exist (one GET per Secret, not per probe). Each Secret kvguard holds a token of is watched (by
 * name: the chart grants {@code get} and {@code watch} on the named Secrets only), and any change
 * or deletion drops the token at once, so a revoked token is never sent again. Without a watch (it
 * failed or closed) a token is read again after {@link #TTL}. A token that cannot be read is a
 * failed probe, never an unauthenticated one.
 */
public final class ProbeCredentials implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProbeCredentials.class);
  static final Duration TTL = Duration.ofSeconds(60);

  /** The token, or why there is none (safe to show: never contains the value). */
  record Lookup(Optional<String> token, String problem) {}

  /**
   * A Secret read: what it gave for one key, the version it was read at, and the policies using it.
   */
  private record Cached(
      Lookup lookup, String resourceVersion, Instant readAt, Set<ResourceID> users) {}

  private final KubernetesClient client;
  private final Clock clock;

  /** By namespace/secret/key. Guarded by {@code this}, as is {@link #watches}. */
  private final Map<String, Cached> cache = new HashMap<>();

  /** By namespace/secret: one watch per Secret some cached token came from. */
  private final Map<String, Watch> watches = new HashMap<>();

  /** Secrets whose watch is being started. */
  private final Set<String> watching = new HashSet<>();

  public ProbeCredentials(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * The token {@code ref} names in {@code namespace}, for {@code user}, which keeps it cached until
   * it forgets it.
   */
  Lookup token(ResourceID user, String namespace, SecretKeyRef ref) {
    if (ref == null) {
      return new Lookup(Optional.empty(), null);
    }
    String secret = namespace + "/" + ref.getName();
    String cacheKey = secret + "/" + ref.effectiveKey();
    Instant now = clock.instant();
    synchronized (this) {
      Cached cached = cache.get(cacheKey);
      boolean watched = watches.containsKey(secret);
      if (cached != null && (watched || cached.readAt.plus(TTL).isAfter(now))) {
        Set<ResourceID> users = new HashSet<>(cached.users);
        users.add(user);
        cache.put(
            cacheKey,
            new Cached(cached.lookup, cached.resourceVersion, cached.readAt, Set.copyOf(users)));
        return cached.lookup;
      }
    }
    // Read outside the lock: a slow API server must not hold every other policy's lookups.
    Secret read = null;
    Lookup lookup;
    try {
      read = client.secrets().inNamespace(namespace).withName(ref.getName()).get();
      lookup =
          lookup(
              read,
              "Secret " + namespace + "/" + ref.getName() + " key " + ref.effectiveKey(),
              ref.effectiveKey());
    } catch (KubernetesClientException e) {
      lookup =
          new Lookup(
              Optional.empty(),
              "cannot read Secret "
                  + namespace
                  + "/"
                  + ref.getName()
                  + " key "
                  + ref.effectiveKey()
                  + " (HTTP "
                  + e.getCode()
                  + ")");
    }
    String version = read == null ? null : read.getMetadata().getResourceVersion();
    boolean needsWatch;
    synchronized (this) {
      Cached previous = cache.get(cacheKey);
      Set<ResourceID> users = new HashSet<>(previous == null ? Set.of() : previous.users);
      users.add(user);
      cache.put(cacheKey, new Cached(lookup, version, now, Set.copyOf(users)));
      needsWatch = !watches.containsKey(secret) && watching.add(secret);
    }
    if (needsWatch) {
      watch(namespace, ref.getName());
    }
    return lookup;
  }

  /**
   * {@code user} (a deleted ModelDeployment) no longer needs its tokens: a token nobody needs is
   * dropped.
   */
  void forget(ResourceID user) {
    java.util.List<Watch> unused = new java.util.ArrayList<>();
    synchronized (this) {
      Map<String, Cached> kept = new HashMap<>();
      cache.forEach(
          (key, cached) -> {
            Set<ResourceID> users = new HashSet<>(cached.users);
            users.remove(user);
            if (!users.isEmpty()) {
              kept.put(
                  key,
                  new Cached(
                      cached.lookup, cached.resourceVersion, cached.readAt, Set.copyOf(users)));
            }
          });
      cache.clear();
      cache.putAll(kept);
      for (String secret : Set.copyOf(watches.keySet())) {
        if (cache.keySet().stream().noneMatch(key -> key.startsWith(secret + "/"))) {
          unused.add(watches.remove(secret));
        }
      }
    }
    // Outside the lock: closing waits on the watch, whose events take the lock.
    unused.forEach(Watch::close);
  }

  /** The policies some cached token is held for (the sweep of deleted policies, and tests). */
  synchronized Set<ResourceID> users() {
    Set<ResourceID> users = new HashSet<>();
    cache.values().forEach(cached -> users.addAll(cached.users));
    return users;
  }

  /** Tokens held and Secrets watched (tests: nothing outlives the policies that named it). */
  synchronized int size() {
    return cache.size() + watches.size();
  }

  private void watch(String namespace, String name) {
    String secret = namespace + "/" + name;
    Watch started = null;
    try {
      Watch watch =
          client
              .secrets()
              .inNamespace(namespace)
              .withName(name)
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, Secret changed) {
                      String version =
                          changed == null ? null : changed.getMetadata().getResourceVersion();
                      drop(secret, action == Action.DELETED ? null : version, false);
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                      // Without its watch a token could outlive its Secret: it goes, and is read
                      // (and watched) again.
                      drop(secret, null, true);
                    }
                  });
      started = watch;
    } catch (KubernetesClientException e) {
      LOG.debug(
          "cannot watch Secret {} (HTTP {}); its token is read again after {}",
          secret,
          e.getCode(),
          TTL);
    }
    boolean unused;
    synchronized (this) {
      watching.remove(secret);
      unused =
          started != null && cache.keySet().stream().noneMatch(key -> key.startsWith(secret + "/"));
      if (started != null && !unused) {
        watches.put(secret, started);
      }
    }
    if (unused) {
      started.close();
    }
  }

  /**
   * Drops the tokens read from {@code secret}, unless the event shows the very version they were
   * read at.
   */
  private synchronized void drop(String secret, String seenVersion, boolean watchClosed) {
    cache
        .entrySet()
        .removeIf(
            entry ->
                entry.getKey().startsWith(secret + "/")
                    && (seenVersion == null
                        || !seenVersion.equals(entry.getValue().resourceVersion)));
    if (watchClosed) {
      watches.remove(secret);
    }
  }

  private static Lookup lookup(Secret secret, String where, String key) {
    if (secret == null) {
      return new Lookup(Optional.empty(), where + " does not exist");
    }
    String encoded = secret.getData() == null ? null : secret.getData().get(key);
    if (encoded != null) {
      try {
        String token =
            new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8).strip();
        if (!token.isEmpty()) {
          return new Lookup(Optional.of(token), null);
        }
      } catch (IllegalArgumentException e) {
        return new Lookup(Optional.empty(), where + " is not valid base64");
      }
    }
    String plain = secret.getStringData() == null ? null : secret.getStringData().get(key);
    if (plain != null && !plain.isBlank()) {
      return new Lookup(Optional.of(plain.strip()), null);
    }
    return new Lookup(Optional.empty(), where + " is missing or empty");
  }

  @Override
  public void close() {
    java.util.List<Watch> all;
    synchronized (this) {
      all = java.util.List.copyOf(watches.values());
      watches.clear();
      cache.clear();
    }
    all.forEach(Watch::close);
  }
}

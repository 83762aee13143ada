package io.kvguard;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.gate.RecordSigner;
import java.net.HttpURLConnection;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The key that signs verdict records: {@value RecordSigner#KEY_BYTES} random bytes in a Secret in
 * the operator's own namespace, read at start and created when absent. Two replicas starting
 * together both try to create it; the loser's create answers 409 and it reads the winner's, so both
 * sign with one key. The key is never logged. A read that fails is retried until it succeeds; the
 * replica is unready meanwhile. Deleting the Secret rotates the key at the next start: every record
 * written under the old one counts as absent, and each pod is probed once more (its gate stays as
 * written meanwhile).
 */
final class VerdictKeySecret implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(VerdictKeySecret.class);
  static final String DATA_KEY = "key";

  /** First wait after a failed read; doubled after each failure up to {@link #MAX_RETRY}. */
  static final Duration FIRST_RETRY = Duration.ofSeconds(1);

  static final Duration MAX_RETRY = Duration.ofSeconds(60);

  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final RecordSigner signer = RecordSigner.keyless();
  private final CountDownLatch firstAttemptDone = new CountDownLatch(1);
  private final ScheduledExecutorService retries =
      Executors.newSingleThreadScheduledExecutor(
          runnable -> {
            Thread thread = new Thread(runnable, "kvguard-verdict-key");
            thread.setDaemon(true);
            return thread;
          });

  private VerdictKeySecret(KubernetesClient client, String namespace, String name) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
  }

  /**
   * Reads (or creates) the key in {@code namespace/name} once now and, while that fails, again with
   * a growing wait: one failed read (an API server restarting, a 429, RBAC not yet bound) must not
   * leave a replica keyless for its life. Until the key arrives the signer trusts no record (every
   * pod is probed, fail closed) and {@link #holdsKey()} keeps the replica unready.
   */
  static VerdictKeySecret load(KubernetesClient client, String namespace, String name) {
    VerdictKeySecret secret = new VerdictKeySecret(client, namespace, name);
    secret.firstAttempt();
    return secret;
  }

  /**
   * As {@link #load}, but the first read runs on the key's own thread, so the caller goes on (the
   * operator starts its informers meanwhile); {@link #awaitFirstAttempt} waits for its outcome.
   */
  static VerdictKeySecret loadInBackground(KubernetesClient client, String namespace, String name) {
    VerdictKeySecret secret = new VerdictKeySecret(client, namespace, name);
    secret.retries.execute(secret::firstAttempt);
    return secret;
  }

  /**
   * Waits at most {@code bound} until the first read has succeeded or failed (its retries go on
   * behind); true when it finished in time. Either way the signer is what it says: keyless until
   * the key arrives (fail closed).
   */
  boolean awaitFirstAttempt(Duration bound) {
    try {
      return firstAttemptDone.await(bound.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void firstAttempt() {
    try {
      if (!attempt()) {
        retryAfter(FIRST_RETRY);
      }
    } finally {
      firstAttemptDone.countDown();
    }
  }

  RecordSigner signer() {
    return signer;
  }

  /** Whether the signer holds its key: the replica is ready only then. */
  boolean holdsKey() {
    return signer.hasKey();
  }

  @Override
  public void close() {
    retries.shutdownNow();
  }

  private void retryAfter(Duration wait) {
    try {
      retries.schedule(
          () -> {
            if (!attempt()) {
              Duration next = wait.multipliedBy(2);
              retryAfter(next.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : next);
            }
          },
          wait.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closed) {
      // The operator is stopping: nothing more to ask for.
    }
  }

  /** One read (and create when absent); true once the signer holds the key. */
  private boolean attempt() {
    try {
      Secret secret = client.secrets().inNamespace(namespace).withName(name).get();
      if (secret == null) {
        secret = create(client, namespace, name);
      }
      byte[] key = keyOf(secret);
      if (key == null) {
        LOG.warn(
            "Secret {}/{} holds no {}-byte base64 value under '{}': verdict records are not trusted and this"
                + " replica stays unready until it holds a key; delete the Secret to have kvguard create a new"
                + " one",
            namespace,
            name,
            RecordSigner.KEY_BYTES,
            DATA_KEY);
        return false;
      }
      signer.install(key);
      LOG.info("verdict records are signed with the key in Secret {}/{}", namespace, name);
      return true;
    } catch (KubernetesClientException e) {
      LOG.warn(
          "cannot read or create the verdict key Secret {}/{} (HTTP {}): verdict records are not trusted and"
              + " this replica stays unready until it holds the key; asking again. Grant get and create on it"
              + " (the chart's Role does)",
          namespace,
          name,
          e.getCode());
      return false;
    }
  }

  private static Secret create(KubernetesClient client, String namespace, String name) {
    byte[] key = new byte[RecordSigner.KEY_BYTES];
    new SecureRandom().nextBytes(key);
    Secret fresh =
        new SecretBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(Map.of("app.kubernetes.io/managed-by", "kvguard"))
            .endMetadata()
            .withType("Opaque")
            .withData(Map.of(DATA_KEY, Base64.getEncoder().encodeToString(key)))
            .build();
    try {
      return client.secrets().inNamespace(namespace).resource(fresh).create();
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
      // Another replica created it first: sign with its key.
      return client.secrets().inNamespace(namespace).withName(name).get();
    }
  }

  private static byte[] keyOf(Secret secret) {
    String encoded =
        secret == null || secret.getData() == null ? null : secret.getData().get(DATA_KEY);
    if (encoded == null) {
      return null;
    }
    try {
      byte[] key = Base64.getDecoder().decode(encoded.strip());
      return key.length == RecordSigner.KEY_BYTES ? key : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}

package io.kvguard;

import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.observe.KvguardMetrics;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespaces of a {@code watchNamespaces} install that kvguard watches: those whose
 * ModelDeployments it may list. A namespace it may not (HTTP 403: its RoleBinding is gone, as when
 * the namespace was deleted, and a namespace's deletion takes its RoleBinding with it) is left out
 * of the start, instead of failing it.
 *
 * <p>Why: JOSDK (v5.2.3, {@code InformerWrapper.start}) fails {@code Operator.start} when one
 * namespace's informer cannot list, and fabric8 (v7.5.2, {@code Reflector}) gives a start no
 * retries. So one deleted namespace stopped kvguard for every other at its next restart: a
 * restarted engine container kept the open gate of the one before it, because nothing watched its
 * pod any more. Turning JOSDK's {@code stopOnInformerErrorDuringStartup} off is not the fix: it
 * applies to the pod informers too, whose refused start kvguard must see ({@code PodCache}).
 *
 * <p>A left-out namespace is listed again every {@link #RECHECK}; once it can be, the replica steps
 * down ({@code restart}: exit in production) and its next start watches it. Not JOSDK's {@code
 * changeNamespaces}: on the leader it stops event processing meanwhile, and v5.2.3's {@code
 * EventProcessor} drops the end of a pass that finishes while stopped without clearing the policy's
 * "under processing" mark, so that policy would never be reconciled again.
 *
 * <p>Other failures of the check (timeouts, 5xx) leave the namespace in: the start then fails or
 * succeeds as before (and a failed start exits, so the next one checks again). Every namespace
 * refused fails the start with a message that names them: an install that may read nothing it was
 * told to guard is broken, and JOSDK would read an empty set as "all namespaces".
 */
final class WatchedNamespaces implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WatchedNamespaces.class);
  static final Duration RECHECK = Duration.ofSeconds(15);
  private static final int CHECKS_AT_ONCE = 8;

  private final KubernetesClient client;
  private final KvguardMetrics metrics;
  private final Set<String> watched;
  private final Set<String> leftOut;
  private final ScheduledExecutorService recheck =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kvguard-namespace-recheck");
            t.setDaemon(true);
            return t;
          });

  private WatchedNamespaces(
      KubernetesClient client, KvguardMetrics metrics, Set<String> watched, Set<String> leftOut) {
    this.client = client;
    this.metrics = metrics;
    this.watched = watched;
    this.leftOut = leftOut;
  }

  /**
   * Lists one ModelDeployment of each configured namespace, several at once, and keeps those that
   * answer anything but 403. An empty {@code configured} (every namespace) is kept as it is.
   *
   * @throws IllegalStateException when every configured namespace answers 403
   */
  static WatchedNamespaces check(
      KubernetesClient client, KvguardMetrics metrics, Set<String> configured) {
    if (configured.isEmpty()) {
      return new WatchedNamespaces(client, metrics, Set.of(), Set.of());
    }
    Map<String, Answer> answered = new LinkedHashMap<>();
    ExecutorService checks =
        Executors.newFixedThreadPool(Math.min(CHECKS_AT_ONCE, configured.size()));
    try {
      Map<String, CompletableFuture<Answer>> answers = new LinkedHashMap<>();
      for (String namespace : new TreeSet<>(configured)) {
        answers.put(
            namespace, CompletableFuture.supplyAsync(() -> list(client, namespace), checks));
      }
      answers.forEach((namespace, answer) -> answered.put(namespace, answer.join()));
    } finally {
      checks.shutdownNow();
    }
    Set<String> watched = new TreeSet<>();
    Set<String> leftOut = new TreeSet<>();
    answered.forEach(
        (namespace, answer) -> (answer == Answer.REFUSED ? leftOut : watched).add(namespace));
    if (watched.isEmpty()) {
      throw new IllegalStateException(
          "kvguard may list ModelDeployments in none of the namespaces it is to watch "
              + leftOut
              + " (HTTP 403 for each): check the chart's watchNamespaces and that each of them"
              + " exists and holds kvguard's RoleBinding");
    }
    for (String namespace : leftOut) {
      LOG.error(
          "kvguard may not list the ModelDeployments of namespace {} (HTTP 403: its RoleBinding is"
              + " gone, as when the namespace is deleted): it is not watched, and the gates of its"
              + " pods are not kept; kvguard lists it again every {} s and restarts to watch it"
              + " once it can. Remove it from watchNamespaces if it is gone for good",
          namespace,
          RECHECK.toSeconds());
      metrics.unwatchedNamespace(namespace, true);
    }
    return new WatchedNamespaces(client, metrics, Set.copyOf(watched), Set.copyOf(leftOut));
  }

  /** What the controller is registered with: the namespaces kvguard may list (empty: all). */
  Set<String> watched() {
    return watched;
  }

  Set<String> leftOut() {
    return leftOut;
  }

  /**
   * Every {@link #RECHECK}, lists each left-out namespace, and each watched namespace whose
   * ModelDeployment informer is not watching ({@code notWatching}); runs {@code restart} once
   * (unless the replica is stopping) when a left-out namespace is listed, or a watched one answers
   * 403. A failed LIST (an outage) is no reason to restart: only a LIST that answers, or a refusal.
   *
   * <p>Why a watched namespace too: its RoleBinding can go while kvguard runs (the namespace is
   * deleted; a namespace admin may delete RoleBindings). fabric8 then retries its WATCH and LIST
   * for ever, the informer is not watching, and JOSDK reports the replica unhealthy ({@code
   * InformerWrapper.getStatus}), so {@code /readyz} fails on every replica and the readiness-gate
   * webhook loses its endpoints for every namespace. A restart leaves the namespace out instead.
   * Nothing is asked of a cluster-wide install (one informer, every namespace).
   */
  void recheck(BooleanSupplier stopping, Supplier<Set<String>> notWatching, Runnable restart) {
    if (watched.isEmpty()) {
      return;
    }
    recheck.scheduleWithFixedDelay(
        () -> {
          if (stopping.getAsBoolean()) {
            return;
          }
          String why = restartFor(notWatching.get());
          if (why != null) {
            LOG.warn("{}; restarting", why);
            recheck.shutdown();
            restart.run();
          }
        },
        RECHECK.toMillis(),
        RECHECK.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Why to restart now, or null. */
  private String restartFor(Set<String> notWatching) {
    for (String namespace : leftOut) {
      if (list(client, namespace) == Answer.LISTED) {
        metrics.unwatchedNamespace(namespace, false);
        return "kvguard may list the ModelDeployments of namespace "
            + namespace
            + " again: the next start watches it";
      }
    }
    for (String namespace : new TreeSet<>(notWatching)) {
      if (watched.contains(namespace) && list(client, namespace) == Answer.REFUSED) {
        return "kvguard may no longer list the ModelDeployments of namespace "
            + namespace
            + " (HTTP 403: its RoleBinding is gone, as when the namespace is deleted): the next"
            + " start leaves it out and guards the others";
      }
    }
    return null;
  }

  private enum Answer {
    LISTED,
    REFUSED,
    /** Neither: a timeout, a 5xx, a connection refused. */
    FAILED
  }

  private static Answer list(KubernetesClient client, String namespace) {
    try {
      client
          .resources(ModelDeployment.class)
          .inNamespace(namespace)
          .list(new ListOptionsBuilder().withLimit(1L).build());
      return Answer.LISTED;
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_FORBIDDEN) {
        return Answer.REFUSED;
      }
      LOG.warn(
          "could not check whether kvguard may list the ModelDeployments of namespace {}: {}",
          namespace,
          e.toString());
      return Answer.FAILED;
    } catch (RuntimeException e) {
      LOG.warn(
          "could not check whether kvguard may list the ModelDeployments of namespace {}: {}",
          namespace,
          e.toString());
      return Answer.FAILED;
    }
  }

  @Override
  public void close() {
    recheck.shutdownNow();
  }
}

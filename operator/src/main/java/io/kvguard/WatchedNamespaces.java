package io.kvguard;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.observe.KvguardMetrics;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
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
 * ModelDeployments it may list and watch. A namespace it may not (HTTP 403 to either: its
 * RoleBinding is gone, as when the namespace was deleted, and a namespace's deletion takes its
 * RoleBinding with it) is left out of the start, instead of failing it.
 *
 * <p>Why: JOSDK (v5.2.3, {@code InformerWrapper.start}) fails {@code Operator.start} when one
 * namespace's informer cannot list or watch, and fabric8 (v7.5.2, {@code Reflector}) gives a start
 * no retries. So one deleted namespace stopped kvguard for every other at its next restart: a
 * restarted engine container kept the open gate of the one before it, because nothing watched its
 * pod any more. Turning JOSDK's {@code stopOnInformerErrorDuringStartup} off is not the fix: it
 * applies to the pod informers too, whose refused start kvguard must see ({@code PodCache}).
 *
 * <p>A left-out namespace is checked again every {@link #RECHECK}; once it answers, the log says
 * so, and kvguard's next start watches it (no restart of its own: {@link #recheck}). A watched
 * namespace refused while kvguard runs is left out of the replica's health instead ({@link
 * #recheck}). Not JOSDK's {@code changeNamespaces}: on the leader it stops event processing
 * meanwhile, and v5.2.3's {@code EventProcessor} drops the end of a pass that finishes while
 * stopped without clearing the policy's "under processing" mark, so that policy would never be
 * reconciled again.
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
  static final Duration CHECK_WAIT = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final KvguardMetrics metrics;
  private final Set<String> watched;
  private final Set<String> leftOut;

  /** Left-out namespaces said to be readable again, until refused again. */
  private final Set<String> readableAgain = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Set<InformerHealth.Informer> refusedNow =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
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
   * Lists one ModelDeployment of each configured namespace and opens a WATCH there, several
   * namespaces at once, and keeps those that answer anything but 403. An empty {@code configured}
   * (every namespace) is kept as it is.
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
      // Bounded: fabric8 v7.5.2 waits for a WATCH's handshake without a limit
      // (BaseOperation.watch). A check that does not end in time leaves the namespace in, as any
      // other failure does. Counted from now for every namespace, so each round of checks that
      // run at once has CHECK_WAIT (a namespace queued behind hung checks is not held for ever).
      int rounds = (configured.size() + CHECKS_AT_ONCE - 1) / CHECKS_AT_ONCE;
      long wait = CHECK_WAIT.multipliedBy(rounds).toMillis();
      for (String namespace : new TreeSet<>(configured)) {
        answers.put(
            namespace,
            CompletableFuture.supplyAsync(
                    () -> list(client, ModelDeployment.class, namespace), checks)
                .completeOnTimeout(Answer.FAILED, wait, TimeUnit.MILLISECONDS));
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
          "kvguard may not list or watch the ModelDeployments of namespace {} (HTTP 403: its"
              + " RoleBinding is gone, as when the namespace is deleted): it is not watched, and"
              + " the gates of its pods are not kept; kvguard checks it again every {} s and says"
              + " when its next start would watch it. Remove it from watchNamespaces if it is gone"
              + " for good",
          namespace,
          RECHECK.toSeconds());
      metrics.unwatchedNamespace(namespace, true);
    }
    return new WatchedNamespaces(client, metrics, Set.copyOf(watched), Set.copyOf(leftOut));
  }

  /**
   * What the controller is registered with: the namespaces kvguard may list and watch (empty: all).
   */
  Set<String> watched() {
    return watched;
  }

  Set<String> leftOut() {
    return leftOut;
  }

  /**
   * Whether the replica's health may leave out this informer: one of a watched namespace that
   * stopped watching and whose check, for its kind of resource, is refused (403).
   */
  boolean refusedNow(InformerHealth.Informer informer) {
    return refusedNow.contains(informer) && !everyNamespaceRefused();
  }

  /**
   * Every watched namespace's ModelDeployments refused: nothing is guarded, and the replica must
   * not read as ready (a start that finds every namespace refused fails too, {@link #check}). It
   * stays unready until its informers watch again or a start leaves those namespaces out.
   */
  private boolean everyNamespaceRefused() {
    Set<String> refusedPolicies = new TreeSet<>();
    for (InformerHealth.Informer informer : refusedNow) {
      if (informer.type() == ModelDeployment.class) {
        refusedPolicies.add(informer.namespace());
      }
    }
    return refusedPolicies.containsAll(watched);
  }

  /**
   * Every {@link #RECHECK}:
   *
   * <ul>
   *   <li>checks each left-out namespace, and says once when it may be listed and watched again:
   *       the next start watches it. No restart of its own: a namespace admin who can delete and
   *       re-create a binding would time restarts of every replica with it (review of the redesign:
   *       each start that lands while the binding is gone leaves the namespace out, the next
   *       recheck after it is back restarts again, and the kubelet's back-off grows to 5 minutes
   *       per replica). The gauge stays at 1 until a start watches the namespace.
   *   <li>checks each informer of a watched namespace that is not watching ({@code notWatching}),
   *       for its kind of resource: one refused (403) is {@link #refusedNow} until it watches
   *       again. The pods' informers as well as the ModelDeployments': RBAC grants each resource
   *       apart, and a namespace admin can leave kvguard its ModelDeployments without its pods (a
   *       Role of their own, as in {@link #list}); PodCache keeps a pod informer whose watch is
   *       refused registered until one lists the namespace again, so it would leave every replica
   *       unready as well.
   * </ul>
   *
   * <p>Why the second: a RoleBinding can go while kvguard runs (the namespace is deleted; a
   * namespace admin may delete RoleBindings). fabric8 then retries the namespace's WATCH and LIST
   * for ever, and JOSDK calls the replica unhealthy ({@code InformerWrapper.getStatus}: not
   * watching), so {@code /readyz} failed on every replica and the readiness-gate webhook lost its
   * endpoints for every namespace. Not a restart: the informer already retries, and watches again
   * by itself once it may; and a restart each time a namespace is refused would let a tenant who
   * deletes and re-creates a binding restart every replica again and again. Every watched namespace
   * refused is not excused ({@link #refusedNow}).
   */
  void recheck(BooleanSupplier stopping, Supplier<Set<InformerHealth.Informer>> notWatching) {
    if (watched.isEmpty()) {
      return;
    }
    recheck.scheduleWithFixedDelay(
        () -> {
          if (stopping.getAsBoolean()) {
            return;
          }
          // A task of a fixed-delay schedule that throws is never run again: then no refusal
          // would be excused any more, and the next one would leave every replica unready.
          try {
            judgeLeftOut();
            judgeWatched(notWatching.get());
          } catch (RuntimeException e) {
            LOG.warn("the check of kvguard's namespaces failed; it runs again", e);
          }
        },
        RECHECK.toMillis(),
        RECHECK.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Says once each time a left-out namespace turns readable (again after a new refusal). */
  private void judgeLeftOut() {
    for (String namespace : leftOut) {
      Answer answer = list(client, ModelDeployment.class, namespace);
      if (answer == Answer.REFUSED) {
        readableAgain.remove(namespace);
      } else if (answer == Answer.LISTED && readableAgain.add(namespace)) {
        LOG.warn(
            "kvguard may list and watch the ModelDeployments of namespace {} again; it is watched"
                + " from kvguard's next start (kubectl rollout restart of its Deployment)",
            namespace);
      }
    }
  }

  private void judgeWatched(Set<InformerHealth.Informer> notWatching) {
    for (InformerHealth.Informer informer : List.copyOf(refusedNow)) {
      if (!notWatching.contains(informer)) {
        refusedNow.remove(informer);
        if (refusedNow.stream().noneMatch(i -> i.namespace().equals(informer.namespace()))) {
          metrics.unwatchedNamespace(informer.namespace(), false);
        }
        LOG.warn(
            "kvguard watches the {} of namespace {} again", kind(informer), informer.namespace());
      }
    }
    for (InformerHealth.Informer informer : notWatching) {
      if (watched.contains(informer.namespace())
          && !refusedNow.contains(informer)
          && HasMetadata.class.isAssignableFrom(informer.type())
          && list(client, informer.type().asSubclass(HasMetadata.class), informer.namespace())
              == Answer.REFUSED) {
        refusedNow.add(informer);
        metrics.unwatchedNamespace(informer.namespace(), true);
        LOG.error(
            "kvguard may no longer list or watch the {} of namespace {} (HTTP 403:"
                + " its RoleBinding is gone, as when the namespace is deleted): its pods' gates"
                + " are not kept, and the replica's readiness no longer counts that informer;"
                + " kvguard watches it again by itself once it may. Remove it from"
                + " watchNamespaces if it is gone for good",
            kind(informer),
            informer.namespace());
      }
    }
  }

  /** As the log names an informer's resources: "ModelDeployments", "Pods". */
  private static String kind(InformerHealth.Informer informer) {
    return informer.type().getSimpleName() + "s";
  }

  /** The check's WATCH is closed as soon as it opens: nothing it would deliver is read. */
  private static <T> Watcher<T> ignored() {
    return new Watcher<>() {
      @Override
      public void eventReceived(Action action, T resource) {}

      @Override
      public void onClose(WatcherException cause) {}
    };
  }

  private enum Answer {
    LISTED,
    REFUSED,
    /** Neither: a timeout, a 5xx, a connection refused. */
    FAILED
  }

  /**
   * Lists one ModelDeployment of the namespace, then opens a WATCH from that LIST and closes it at
   * once: what JOSDK's informer does at its start, and a refused WATCH fails that start as a
   * refused LIST does (fabric8 v7.5.2 {@code Reflector.onException}: before the first success its
   * default handler retries nothing; JOSDK v5.2.3 {@code InformerWrapper.start} then throws). RBAC
   * grants the two verbs apart, and a namespace admin can leave kvguard one without the other (a
   * Role of their own granting only {@code list}, bound to kvguard's ServiceAccount: Kubernetes'
   * escalation check lets anyone bind what they hold), so a LIST alone let such a namespace fail
   * every start.
   */
  private static <T extends HasMetadata> Answer list(
      KubernetesClient client, Class<T> type, String namespace) {
    try {
      var listed =
          client
              .resources(type)
              .inNamespace(namespace)
              .list(new ListOptionsBuilder().withLimit(1L).build());
      // fabric8 v7.5.2 BaseOperation.watch waits for the WebSocket handshake and throws its 403.
      try (Watch opened =
          client
              .resources(type)
              .inNamespace(namespace)
              .watch(
                  new ListOptionsBuilder()
                      .withResourceVersion(listed.getMetadata().getResourceVersion())
                      .withTimeoutSeconds(1L)
                      .build(),
                  WatchedNamespaces.<T>ignored())) {
        return Answer.LISTED;
      }
    } catch (RuntimeException e) {
      if (e instanceof KubernetesClientException refused
          && refused.getCode() == HttpURLConnection.HTTP_FORBIDDEN) {
        return Answer.REFUSED;
      }
      LOG.warn(
          "could not check whether kvguard may list and watch the ModelDeployments of namespace"
              + " {}: {}",
          namespace,
          e.toString());
      return Answer.FAILED;
    }
  }

  @Override
  public void close() {
    recheck.shutdownNow();
    // A stopped replica says nothing of what it watched: the series go with it, as they would with
    // its process (a registry can outlive the replica: tests, the benchmark).
    for (String namespace : leftOut) {
      metrics.unwatchedNamespace(namespace, false);
    }
    for (InformerHealth.Informer informer : refusedNow) {
      metrics.unwatchedNamespace(informer.namespace(), false);
    }
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.health.InformerHealthIndicator;
import io.javaoperatorsdk.operator.processing.event.EventSourceRetriever;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.PrimaryToSecondaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvguard.customresource.ModelDeployment;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pods kvguard caches: those of the namespaces that hold a ModelDeployment, and no others. A
 * ModelDeployment selects pods of its own namespace only, so a pod elsewhere can concern no policy;
 * caching every pod of the cluster cost about 20 KiB of heap per pod (4,000 unrelated pods: 78 MiB,
 * issue 18).
 *
 * <p>One pod informer per such namespace, registered with JOSDK as an event source of its own
 * ({@code pods-<ns>}) when a pass of a ModelDeployment there first needs it, and stopped when a
 * pass ends with no ModelDeployment left in its namespace. Each informer has its own {@link
 * LeanPodStore} (JOSDK's multi-namespace informer shares one item store between its namespaces, and
 * a relist of one namespace would then drop the others' pods) and lists in pages of {@value
 * #LIST_PAGE_SIZE}, so at most one page of whole pods is parsed at once. Of the namespace's pods it
 * keeps only those a policy there selects or that carry something kvguard wrote ({@link
 * PodCacheFilter}); the others (batch jobs beside the engines) are held as keys: a pod beside
 * guarded ones cost 7.4 KiB of heap before.
 *
 * <p>At most {@code KVGUARD_POD_LIST_CONCURRENCY} namespaces (default 1, {@code KvguardConfig}) do
 * their first LIST at once, from the informer's start until it has listed: at start-up every
 * namespace's first pass arrives together, and ten namespaces of 500 whole pods (27 KB of JSON
 * each) parsed at the same time ran the chart's 256 MiB heap out of memory. A pass waiting longer
 * than {@link #LIST_PERMIT_WAIT} for its turn fails (and is retried), as a failed LIST does.
 *
 * <p>A pass holds its namespace's cache open ({@link #use}) from start to end, hand-backs included:
 * a deleted policy's last pass still finds the pods it must hand back, and another pass ending
 * meanwhile cannot drop them.
 */
final class PodCache implements SelectionIndex.Pods {
  private static final Logger LOG = LoggerFactory.getLogger(PodCache.class);

  /** How long after a failed LIST of a namespace whose watch is lost its passes try no other. */
  private static final java.time.Duration RELIST_RETRY = java.time.Duration.ofSeconds(30);

  /**
   * The longest time between two refused (403) LISTs of a namespace that still counts as one run of
   * refusals: a deletion's pass comes back every 5 s while its LIST is refused, JOSDK's retries at
   * most 10 s apart.
   */
  static final Duration LIST_REFUSALS_APART = Duration.ofSeconds(30);

  private final Clock clock;

  /** Pods per LIST page: client-go's default page size. */
  static final long LIST_PAGE_SIZE = 500;

  static final String SOURCE_PREFIX = "pods-";

  /** How long a pass waits for its namespace's turn to list before it fails. */
  static final java.time.Duration LIST_PERMIT_WAIT = java.time.Duration.ofMinutes(5);

  /**
   * Names the informer that lists a namespace again beside the one it replaces (a namespace name
   * has no dot).
   */
  static final String RELIST_SUFFIX = ".relisted";

  /**
   * Passes read their pods from this cache ({@link #use}), never through JOSDK's {@code
   * Context.getSecondaryResources}. Without a primary-to-secondary mapper JOSDK keeps a reverse
   * index for that lookup, fed by {@link #policiesOfPod} for every pod when the informer starts,
   * for every add and update, and for every write of the operator's own (java-operator-sdk v5.2.3,
   * {@code InformerEventSource}: {@code start}, {@code onAdd}, {@code onUpdate}, {@code
   * handleRecentCreateOrUpdate}): at start-up 1,000 pods cost a policy lookup each before the first
   * pass could read the namespace (issue 28 §5). With this mapper the index is JOSDK's no-op one.
   */
  static final PrimaryToSecondaryMapper<ModelDeployment> NO_SECONDARY_LOOKUP =
      policy -> {
        throw new UnsupportedOperationException(
            "a ModelDeployment's pods are read from PodCache, not from JOSDK's secondary resources");
      };

  private final SecondaryToPrimaryMapper<Pod> policiesOfPod;
  private final ConcurrentMap<String, Cached> byNamespace = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Namespace> namespaces = new ConcurrentHashMap<>();
  private final OwnWrites ownWrites = new OwnWrites();

  /**
   * Every namespace informer started and not stopped yet, so that kvguard's own stop ({@link
   * #close}) reaches those JOSDK's stop cannot: one a pass registered after JOSDK stopped its event
   * sources and started before the pass was interrupted (JOSDK v5.2.3 {@code Operator.stop} stops
   * the event sources, then interrupts the passes; it has no stopped state a registration sees).
   */
  private final Set<NamespacePodsEventSource> live = ConcurrentHashMap.newKeySet();

  /** Set by {@link #close}: a start after it fails, and stops its informer. */
  private volatile boolean closed;

  /** Turns to list a namespace; fair, so namespaces list in the order their passes asked. */
  private final Semaphore listing;

  /**
   * Per namespace: the lock that orders starting, relisting and stopping its informer, and the
   * passes using it.
   */
  private static final class Namespace {
    int passes;

    /**
     * Since when every start of an informer of the namespace (its first, or one listing it anew)
     * has listed it and then had its WATCH refused. With nothing cached no pass can see any pod;
     * with a cache whose selectors changed, no pass can read it (each must list anew first), and a
     * pod that restarted keeps the gate of the container before it.
     */
    final WatchLoss refusedStarts = new WatchLoss();

    /**
     * When a start of the namespace's informer last listed it and then had its WATCH refused: the
     * API server answers, and refuses kvguard the watch (its RBAC, say). Null once a start
     * succeeds, or fails before its LIST is done: an outage says nothing about the watch.
     */
    Instant watchRefused;

    /**
     * What the last such start of the namespace's first informer listed (nothing else of it is
     * cached): the pods its passes shut.
     */
    LeanPodStore refusedList;

    /**
     * Since when every start of an informer of the namespace has had its LIST refused (HTTP 403):
     * kvguard's RBAC there is gone, as when the namespace is deleted with its RoleBinding ({@code
     * watchNamespaces}). Null once a LIST is done, or fails otherwise.
     */
    volatile Instant listForbidden;

    /**
     * When a start's LIST was last refused (HTTP 403). A refusal more than {@link
     * PodCache#LIST_REFUSALS_APART} after the one before starts a new run: nothing said the
     * namespace was refused in between (JOSDK stops retrying a failing pass after five tries).
     */
    Instant listForbiddenLast;

    /** The filter last computed, and the policies (UID and generation) it was computed from. */
    Set<String> filterOf;

    PodCacheFilter filter;

    /**
     * The filter the namespace's policies want. A pass asks under the namespace's lock, and at N =
     * 1,000 every one of a namespace's passes read every policy's selectors to hash them (issue 28
     * §5): the selectors are in the spec, whose every change the API server counts in {@code
     * metadata.generation}, so the filter is computed again only when a policy came, went or
     * changed generation.
     */
    PodCacheFilter wanted(List<ModelDeployment> policies) {
      Set<String> of = new HashSet<>();
      for (ModelDeployment md : policies) {
        Long generation = md.getMetadata().getGeneration();
        if (generation == null) {
          return PodCacheFilter.of(policies.stream());
        }
        of.add(md.getMetadata().getUid() + "/" + generation);
      }
      if (!of.equals(filterOf)) {
        filter = PodCacheFilter.of(policies.stream());
        filterOf = of;
      }
      return filter;
    }
  }

  /**
   * A namespace's informer and the filter its store keeps pods by; {@code listedOnly}: no informer,
   * only what a refused start listed, held for a deletion's pass alone ({@link #use}).
   */
  private record Cached(
      Informer source,
      LeanPodStore store,
      PodCacheFilter filter,
      WatchLoss watch,
      boolean listedOnly,
      Cached replaced) {
    Cached(Informer source, LeanPodStore store, PodCacheFilter filter) {
      this(source, store, filter, new WatchLoss(), false, null);
    }

    /**
     * What a start listed before its WATCH was refused, read by a deletion's pass: handing pods
     * back needs no watch (each write tests the pod's resourceVersion, and a stale one is read
     * again), and the finalizer must not wait for one kvguard may never get. {@code replaced}: the
     * namespace's cache, put back when that pass is done (null: none).
     */
    static Cached listedOnly(
        String namespace, LeanPodStore listed, PodCacheFilter filter, Cached replaced) {
      Informer none =
          new Informer() {
            @Override
            public String name() {
              return SOURCE_PREFIX + namespace + LISTED_ONLY_SUFFIX;
            }

            @Override
            public Optional<Pod> get(ResourceID pod) {
              return listed.kept(pod);
            }

            @Override
            public void handleRecentResourceUpdate(ResourceID pod, Pod written, Pod base) {
              // No informer, so no watch event of the write to tell apart.
            }

            @Override
            public boolean watching() {
              return false;
            }
          };
      return new Cached(none, listed, filter, new WatchLoss(), true, replaced);
    }
  }

  /** Names (in logs only) what a refused start listed, held for a deletion's pass. */
  static final String LISTED_ONLY_SUFFIX = ".listed-only";

  /**
   * What this cache uses of a namespace's informer: JOSDK's {@link InformerEventSource} (a test's
   * stand-in through {@link #cached}).
   */
  interface Informer {
    String name();

    /**
     * The pod as JOSDK reads it: JOSDK 5.2.3 {@code ManagedInformerEventSource.get} answers from
     * its temporary cache (a write it was told of, until the pod's next watch event) before the
     * store.
     */
    Optional<Pod> get(ResourceID pod);

    /**
     * Tells JOSDK's temporary cache of an accepted write; {@code base}: the version it replaced.
     */
    void handleRecentResourceUpdate(ResourceID pod, Pod written, Pod base);

    /** Whether its watch is open now (JOSDK's health indicator: fabric8's {@code isWatching}). */
    default boolean watching() {
      return true;
    }
  }

  private static Informer informer(InformerEventSource<Pod, ModelDeployment> source) {
    return new Informer() {
      @Override
      public String name() {
        return source.name();
      }

      @Override
      public Optional<Pod> get(ResourceID pod) {
        return source.get(pod);
      }

      @Override
      public void handleRecentResourceUpdate(ResourceID pod, Pod written, Pod base) {
        source.handleRecentResourceUpdate(pod, written, base);
      }

      @Override
      public boolean watching() {
        return source.informerHealthIndicators().values().stream()
            .allMatch(InformerHealthIndicator::isWatching);
      }
    };
  }

  PodCache(SecondaryToPrimaryMapper<Pod> policiesOfPod, int listConcurrency) {
    this(policiesOfPod, listConcurrency, Clock.systemUTC());
  }

  PodCache(SecondaryToPrimaryMapper<Pod> policiesOfPod, int listConcurrency, Clock clock) {
    if (listConcurrency < 1) {
      throw new IllegalArgumentException(
          "at least one namespace must be able to list, was " + listConcurrency);
    }
    this.policiesOfPod = policiesOfPod;
    this.clock = clock;
    this.listing = new Semaphore(listConcurrency, true);
  }

  /**
   * A pass's hold on its namespace's pods; closing it drops the namespace's cache if no policy is
   * left there.
   */
  interface InUse extends AutoCloseable {
    @Override
    void close();

    /**
     * Set when this deletion's pass hands back without the namespace's pods as they are: kvguard
     * has been refused their LIST (HTTP 403) since then, for longer than {@link WatchLoss#BOUND}.
     */
    default Optional<Instant> listForbiddenSince() {
      return Optional.empty();
    }
  }

  /**
   * Caches the namespace's pods unless that is done already (returns once its first LIST is in the
   * cache, so the pass sees every pod of a policy new to the namespace) and holds them until the
   * returned hold is closed.
   *
   * <p>The cache keeps the pods the namespace's policies select now ({@link PodCacheFilter}, from
   * the policies' cache). When those selectors changed (a policy created, edited or deleted there),
   * the namespace is listed again with the new filter before this pass reads it: once no other pass
   * of the namespace holds the old cache (a pass never sees its pods change cache under it; passes
   * arriving meanwhile wait too), a new informer lists it, and only then replaces the old one
   * (probes checking their pod meanwhile still find it).
   */
  InUse use(
      String namespace,
      EventSourceRetriever<ModelDeployment> sources,
      IndexerResourceCache<ModelDeployment> policies) {
    return use(namespace, sources, policies, false);
  }

  /**
   * As above; {@code deletion}: the pass hands a deleted policy's pods back, and must not wait for
   * a watch kvguard may not get back. It lists the namespace as any pass would (a namespace never
   * cached, selectors changed, a watch down longer than {@link WatchLoss#BOUND}), is never held
   * back by the throttle, and when that LIST's WATCH is refused it reads the LIST itself, held for
   * it alone: a cache kept by a lost watch, or an earlier start's LIST, misses every pod created
   * since, whose readiness gate nobody would open once the finalizer is lifted. A LIST that fails
   * fails the pass, to be retried.
   */
  InUse use(
      String namespace,
      EventSourceRetriever<ModelDeployment> sources,
      IndexerResourceCache<ModelDeployment> policies,
      boolean deletion) {
    Namespace state = namespaces.computeIfAbsent(namespace, ns -> new Namespace());
    synchronized (state) {
      Instant now = clock.instant();
      PodCacheFilter wanted = state.wanted(policies.list(namespace).toList());
      Cached current = byNamespace.get(namespace);
      while (current != null && needsListing(namespace, current, wanted, now) && state.passes > 0) {
        try {
          state.wait();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(
              "interrupted waiting to list namespace " + namespace + " again", e);
        }
        now = clock.instant();
        wanted = state.wanted(policies.list(namespace).toList());
        current = byNamespace.get(namespace);
      }
      if (current == null || needsListing(namespace, current, wanted, now)) {
        Optional<Instant> lost =
            current == null ? Optional.empty() : check(namespace, current, now);
        // Only past the bound, when the pass shuts instead: before it, a pass whose namespace's
        // informer had its WATCH refused tries again at once (JOSDK's retries, 2 s on).
        boolean pastBound =
            lost.isPresent()
                || state.refusedStarts.lostLongerThan(WatchLoss.BOUND, now).isPresent();
        boolean throttled =
            !deletion
                && pastBound
                && state.watchRefused != null
                && now.isBefore(state.watchRefused.plus(RELIST_RETRY));
        Cached started = null;
        StartFailed failed = null;
        if (!throttled) {
          try {
            started = start(namespace, wanted, current, sources);
          } catch (StartFailed e) {
            failed = e;
            if (e.listed()) {
              state.listForbidden = null;
              state.watchRefused = now;
              state.refusedStarts.sample(false, now);
              if (current == null) {
                state.refusedList = e.store();
              }
            } else {
              // A LIST that failed says nothing of the watch, and leaves the run of refused
              // starts as it was: restarting it would let LISTs that fail every other time keep
              // a shut from ever coming (review of 291d411).
              state.watchRefused = null;
              boolean sameRun =
                  state.listForbidden != null
                      && state.listForbiddenLast != null
                      && !now.isAfter(state.listForbiddenLast.plus(LIST_REFUSALS_APART));
              state.listForbidden = !forbidden(e) ? null : sameRun ? state.listForbidden : now;
              state.listForbiddenLast = state.listForbidden == null ? null : now;
            }
          }
        }
        if (started == null) {
          // A deletion's pass hands back from what its own start listed before its WATCH was
          // refused, or, once kvguard has been refused the LIST itself for longer than the bound,
          // from what it has (nothing, or the cache as its watch last left it). Any other pass
          // fails and is retried.
          Optional<Cached> forDeletion =
              deletion && failed != null
                  ? deletionSource(namespace, state, failed, current, wanted, now)
                  : Optional.empty();
          if (forDeletion.isEmpty()) {
            if (failed != null) {
              throw failed;
            }
            // Its WATCH was refused a moment ago: the pass goes on without listing (its pods are
            // shut, ModelDeploymentReconciler), and does not cost the API server a LIST each.
            throw new IllegalStateException(
                "kvguard's WATCH of the pods of namespace "
                    + namespace
                    + " was refused at "
                    + state.watchRefused
                    + "; it lists them again "
                    + RELIST_RETRY.toSeconds()
                    + " s after that");
          }
          if (forDeletion.get() != current) {
            byNamespace.put(namespace, forDeletion.get());
          }
          LOG.info(
              "handing pods of namespace {} back from {}",
              namespace,
              failed.listed()
                  ? "a LIST: kvguard's WATCH of them is refused"
                  : "what it has: kvguard may not list them (HTTP 403) since "
                      + state.listForbidden);
          Instant since = failed.listed() ? null : state.listForbidden;
          state.passes++;
          return new InUse() {
            @Override
            public void close() {
              release(namespace, state, sources, policies);
            }

            @Override
            public Optional<Instant> listForbiddenSince() {
              return Optional.ofNullable(since);
            }
          };
        } else {
          state.refusedStarts.sample(true, now);
          state.watchRefused = null;
          state.refusedList = null;
          state.listForbidden = null;
          byNamespace.put(namespace, started);
          if (current != null) {
            if (!current.listedOnly()) {
              sources.dynamicallyDeRegisterEventSource(current.source().name());
            }
            if (lost.isPresent()) {
              LOG.info(
                  "listed the pods of namespace {} again: its watch had been down since {}",
                  namespace,
                  lost.get());
            } else {
              LOG.info(
                  "listed the pods of namespace {} again: its ModelDeployments' selectors changed",
                  namespace);
            }
          }
        }
      } else if (watchingNow(current)) {
        // Watched as it is and read as it is: a refusal before (a relist's WATCH, while the watch
        // it would have replaced came back by itself) says nothing of now.
        state.refusedStarts.sample(true, now);
        state.watchRefused = null;
      }
      state.passes++;
    }
    return () -> release(namespace, state, sources, policies);
  }

  /**
   * What a deletion's pass hands back from when its start failed: what that start listed before its
   * WATCH was refused, or, once kvguard has been refused the LIST itself (HTTP 403) for longer than
   * {@link WatchLoss#BOUND}, what it has: the cache as its watch last left it, or nothing. A
   * namespace being deleted takes kvguard's RoleBinding with it ({@code watchNamespaces}), and the
   * policy's finalizer must not hold it in Terminating for ever: a hand-back refused is never a
   * reason to keep it (GateStage.handBack). Empty otherwise: the pass fails and is retried. Called
   * holding {@code state}'s lock.
   */
  private static Optional<Cached> deletionSource(
      String namespace,
      Namespace state,
      StartFailed failed,
      Cached current,
      PodCacheFilter wanted,
      Instant now) {
    if (failed.listed()) {
      return Optional.of(Cached.listedOnly(namespace, failed.store(), wanted, current));
    }
    if (state.listForbidden == null
        || Duration.between(state.listForbidden, now).compareTo(WatchLoss.BOUND) <= 0) {
      return Optional.empty();
    }
    return Optional.of(
        current != null
            ? current
            : Cached.listedOnly(namespace, new LeanPodStore(namespace, wanted), wanted, null));
  }

  /** Whether the start failed because the API server refused kvguard the LIST (HTTP 403). */
  private static boolean forbidden(StartFailed failed) {
    for (Throwable t = failed.getCause(); t != null; t = t.getCause()) {
      if (t instanceof KubernetesClientException k && k.getCode() == 403) {
        return true;
      }
    }
    return false;
  }

  /**
   * Since when every start of an informer of the namespace has had its LIST refused (HTTP 403), if
   * the last one did.
   */
  Optional<Instant> listForbidden(String namespace) {
    Namespace state = namespaces.get(namespace);
    if (state == null) {
      return Optional.empty();
    }
    // Not under the namespace's lock: a pass holds it while its informer starts (minutes at worst).
    return Optional.ofNullable(state.listForbidden);
  }

  /** Whether the cache's informer watches now; one being stopped may throw (sampleWatches). */
  private static boolean watchingNow(Cached cached) {
    try {
      return cached.source().watching();
    } catch (RuntimeException e) {
      return false;
    }
  }

  private Cached start(
      String namespace,
      PodCacheFilter filter,
      Cached replacing,
      EventSourceRetriever<ModelDeployment> sources) {
    // The pods of the first LIST trigger no passes: every pass of the namespace waits for that LIST
    // and then reads the cache it filled (the pod is cached before its event is handed out), so
    // those events would only repeat each policy's pass (and a repeated pass reading a pod before
    // the watch brings back its own write gets a conflict). Pods added after the LIST trigger
    // passes as always. The LIST's add events are handed out on another thread and may still arrive
    // after the informer reports it has listed, so they are told apart by what the LIST brought
    // (name and resourceVersion), not by when they arrive.
    AtomicReference<Set<String>> firstList = new AtomicReference<>();
    // A replacement runs beside the informer it replaces until it has listed, so it needs another
    // name.
    String name = SOURCE_PREFIX + namespace;
    if (replacing != null && replacing.source().name().equals(name)) {
      name = name + RELIST_SUFFIX;
    }
    LeanPodStore store = new LeanPodStore(namespace, filter);
    NamespacePodsEventSource source =
        new NamespacePodsEventSource(
            InformerEventSourceConfiguration.from(Pod.class, ModelDeployment.class)
                .withName(name)
                .withNamespaces(Set.of(namespace))
                .withFollowControllerNamespacesChanges(false)
                .withItemStore(store)
                .withInformerListLimit(LIST_PAGE_SIZE)
                .withSecondaryToPrimaryMapper(policiesOfPod)
                .withPrimaryToSecondaryMapper(NO_SECONDARY_LOOKUP)
                .withOnAddFilter(
                    pod -> afterFirstList(firstList.get(), pod) && addTriggersPass(filter, pod))
                .build(),
            sources.eventSourceContextForDynamicRegistration(),
            live::remove);
    awaitTurnToList(namespace);
    boolean stopping = false;
    try {
      // Known before it starts, so that close() finds it or it finds close() was called.
      live.add(source);
      // Registers and starts it: returns once the informer has listed the namespace (or throws).
      if (sources.dynamicallyRegisterEventSource(source) != source) {
        // JOSDK v5.2.3 EventSourceManager.dynamicallyRegisterEventSource starts and returns the
        // source already registered under the name, and never starts this one: its store would
        // stay empty, and the pass would see no pod. The stray one is deregistered (and stopped)
        // below, and the next pass starts afresh.
        stopping = true;
        throw new IllegalStateException(
            "a pod informer named " + source.name() + " was registered already");
      }
      if (closed) {
        stopping = true;
        throw new IllegalStateException(
            "kvguard stops: the pod informer of namespace " + namespace + " is not kept");
      }
      if (Thread.currentThread().isInterrupted()) {
        // JOSDK v5.2.3 swallows an interrupt of the thread waiting for the informers' start
        // (ExecutorServiceManager.executeAndWaitForAllToComplete catches InterruptedException and
        // returns; invokeAll has cancelled the start) and then marks the source running
        // (ManagedInformerEventSource.start): whether it listed is unknown. The operator's stop
        // interrupts the passes (ExecutorServiceManager.stop: shutdownNow, kvguard keeps JOSDK's
        // reconciliationTerminationTimeout of zero) after it stopped the event sources
        // (Operator.stop), so this one would run on, unstopped.
        stopping = true;
        throw new IllegalStateException(
            "interrupted while the pod informer of namespace " + namespace + " started");
      }
      firstList.set(
          store.values().map(PodCache::listedVersion).collect(Collectors.toUnmodifiableSet()));
    } catch (RuntimeException e) {
      // Whether it listed before it failed: JOSDK's hasSynced is true once the first LIST is in the
      // store, before the first WATCH opens (docs/reliability.md, the informer that stops). An
      // interrupted start, or one kvguard's stop met, says nothing of the watch.
      boolean listed = !stopping && listed(source);
      // Its informers stopped here: JOSDK's own stop does nothing to a source whose start threw (it
      // never ran), and fabric8 keeps the informer's watch-close task scheduled, with its whole
      // store, until the informer is stopped (NamespacePodsEventSource, whose stop(), called by the
      // deregistration below, does this as well).
      source.stopInformers();
      live.remove(source);
      // Not left registered half-started: the next pass tries again from scratch.
      sources.dynamicallyDeRegisterEventSource(source.name());
      throw new StartFailed(namespace, listed, store, e);
    } finally {
      listing.release();
    }
    if (replacing == null) {
      LOG.info("caching the pods of namespace {}: it holds a ModelDeployment", namespace);
    }
    return new Cached(informer(source), store, filter);
  }

  private static boolean listed(InformerEventSource<Pod, ModelDeployment> source) {
    try {
      var informers = source.informerHealthIndicators().values();
      return !informers.isEmpty()
          && informers.stream().allMatch(InformerHealthIndicator::hasSynced);
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * A namespace's informer could not start; {@code listed}: its LIST was done (so its WATCH was
   * what failed), and {@code store} holds what it listed.
   */
  static final class StartFailed extends RuntimeException {
    private final boolean listed;
    private final transient LeanPodStore store;

    StartFailed(String namespace, boolean listed, LeanPodStore store, RuntimeException cause) {
      super(
          "cannot cache the pods of namespace "
              + namespace
              + (listed ? " (listed, then its WATCH failed)" : "")
              + ": "
              + cause.getMessage(),
          cause);
      this.listed = listed;
      this.store = store;
    }

    boolean listed() {
      return listed;
    }

    LeanPodStore store() {
      return store;
    }
  }

  /**
   * Caches {@code namespace} as though its informer had listed it into {@code store} (for tests,
   * which drive the store and the informer's temporary cache in a chosen order).
   */
  void cached(String namespace, Informer informer, LeanPodStore store, PodCacheFilter filter) {
    byNamespace.put(namespace, new Cached(informer, store, filter));
  }

  /**
   * Whether an added pod is not one of the namespace's first LIST (null: that LIST is not done).
   */
  static boolean afterFirstList(Set<String> firstList, Pod added) {
    return firstList != null && !firstList.contains(listedVersion(added));
  }

  private static String listedVersion(Pod pod) {
    return pod.getMetadata().getName() + "@" + pod.getMetadata().getResourceVersion();
  }

  /**
   * Whether a pod added after the namespace's first LIST triggers passes: only one its cache keeps
   * whole. fabric8 (7.5.2, {@code ProcessorStore.updateInternal}) hands the add handler the pod as
   * the watch brought it, not the store's copy, so the filter is asked, not the stored object.
   */
  static boolean addTriggersPass(PodCacheFilter filter, Pod added) {
    return !LeanPodStore.isKeyOnly(added) && filter.keeps(added);
  }

  private void awaitTurnToList(String namespace) {
    boolean acquired;
    try {
      acquired = listing.tryAcquire(LIST_PERMIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting to list namespace " + namespace, e);
    }
    if (!acquired) {
      throw new IllegalStateException(
          "namespace "
              + namespace
              + " waited "
              + LIST_PERMIT_WAIT
              + " for other namespaces' first LISTs (KVGUARD_POD_LIST_CONCURRENCY) to finish");
    }
  }

  private void release(
      String namespace,
      Namespace state,
      EventSourceRetriever<ModelDeployment> sources,
      IndexerResourceCache<ModelDeployment> policies) {
    synchronized (state) {
      state.passes--;
      Cached current = byNamespace.get(namespace);
      if (state.passes == 0 && current != null && current.listedOnly()) {
        // Held for a deletion's pass alone: the namespace's cache is as before it.
        if (current.replaced() == null) {
          byNamespace.remove(namespace, current);
        } else {
          byNamespace.replace(namespace, current, current.replaced());
        }
      }
      state.notifyAll();
      dropIfUnused(namespace, state, sources, policies);
    }
  }

  /**
   * Stops caching every namespace no pass holds and no ModelDeployment is left in. A pass's end
   * does this for its own namespace; this is for the namespaces listed ahead of any pass ({@code
   * PodCacheWarmUp}) on a replica that does not lead, which runs no pass to drop them.
   */
  void dropUnused(
      EventSourceRetriever<ModelDeployment> sources,
      IndexerResourceCache<ModelDeployment> policies) {
    for (String namespace : namespaces()) {
      Namespace state = namespaces.get(namespace);
      if (state != null) {
        synchronized (state) {
          dropIfUnused(namespace, state, sources, policies);
        }
      }
    }
  }

  /** Called holding {@code state}'s lock. */
  private void dropIfUnused(
      String namespace,
      Namespace state,
      EventSourceRetriever<ModelDeployment> sources,
      IndexerResourceCache<ModelDeployment> policies) {
    // Policies of the namespace in the cache include those being deleted (their finalizer still
    // on): their last pass, on the deletion itself, comes after, and hands their pods back from
    // this cache.
    if (state.passes > 0 || policies.list(namespace).findAny().isPresent()) {
      return;
    }
    // Nothing of a refusal outlives the namespace's last policy: the last refused start's LIST
    // would otherwise stay on the heap for as long as the replica runs.
    state.refusedList = null;
    state.watchRefused = null;
    state.listForbidden = null;
    state.refusedStarts.sample(true, clock.instant());
    Cached cached = byNamespace.remove(namespace);
    if (cached != null && !cached.listedOnly()) {
      sources.dynamicallyDeRegisterEventSource(cached.source().name());
      LOG.info(
          "stopped caching the pods of namespace {}: no ModelDeployment left there", namespace);
    }
  }

  /**
   * Samples every cached namespace's watch (every few seconds, so that a loss is seen as
   * continuous); returns the namespaces whose watch has just been down longer than {@link
   * WatchLoss#BOUND}, whose policies need a pass now rather than at their next period. Each is
   * returned once per loss, whether or not a pass of one of its policies saw the loss first.
   */
  Set<String> sampleWatches(Instant now) {
    Set<String> justLost = new TreeSet<>();
    byNamespace.forEach(
        (namespace, cached) -> {
          if (cached.listedOnly()) {
            return;
          }
          try {
            if (check(namespace, cached, now).isPresent() && cached.watch().passesDue(now)) {
              justLost.add(namespace);
            }
          } catch (RuntimeException e) {
            // An informer being stopped (its namespace dropped, or listed again and replaced) can
            // throw: fabric8 v7.5.2 Reflector.isWatching reads Optional.of(watchFuture), which
            // Reflector.stopWatcher has set to null before the watch's close clears `watching`.
            // A sample missed changes nothing (a loss is cleared only by a sample finding the
            // watch up), and the other namespaces are still sampled and their passes asked for.
            LOG.debug("cannot sample the pod watch of namespace {}: {}", namespace, e.toString());
          }
        });
    namespaces.forEach(
        (namespace, state) -> {
          // Not under the namespace's lock: a pass holds it while its informer starts (minutes at
          // worst). WatchLoss is safe on its own.
          Optional<Instant> since = state.refusedStarts.lostLongerThan(WatchLoss.BOUND, now);
          if (since.isEmpty() || !state.refusedStarts.passesDue(now)) {
            return;
          }
          if (state.refusedStarts.firstAnnouncement()) {
            Cached cached = byNamespace.get(namespace);
            if (cached == null || cached.listedOnly()) {
              LOG.warn(
                  "the pods of namespace {} could not be cached since {} (kvguard's first WATCH of"
                      + " pods there fails or is refused): every gate there is shut until it can",
                  namespace,
                  since.get());
            } else {
              LOG.warn(
                  "the pods of namespace {} could not be listed anew since {} (kvguard's WATCH of"
                      + " pods there is refused, and its ModelDeployments' selectors changed):"
                      + " every gate there is shut until it can",
                  namespace,
                  since.get());
            }
          }
          justLost.add(namespace);
        });
    return justLost;
  }

  /**
   * Since when the namespace's pod watch has been down, once that is longer than {@link
   * WatchLoss#BOUND}: its cache may keep pods as they were before that ({@link WatchLoss}). Samples
   * the watch as a pass does in {@link #use} (which then lists the namespace anew).
   */
  Optional<Instant> watchLost(String namespace, Instant now) {
    Cached cached = byNamespace.get(namespace);
    return cached == null ? Optional.empty() : check(namespace, cached, now);
  }

  /**
   * Whether a pass must list the namespace anew before it reads it: its policies' selectors
   * changed, or its watch has been down longer than {@link WatchLoss#BOUND} (fabric8 would keep its
   * cache as it was for ever: {@link WatchLoss}). After an outage of the API server the new LIST
   * brings every pod as it is, where the watch's own reconnection could still be 32 s away.
   */
  private static boolean needsListing(
      String namespace, Cached current, PodCacheFilter wanted, Instant now) {
    if (current.listedOnly()) {
      // Held for one deletion's pass: every other pass, another deletion's too, lists the
      // namespace itself once that pass is done. That LIST misses every pod created since, and
      // when it is an empty stand-in (its LIST refused past the bound) the other pass must meet
      // the refusal itself to say so (review of f32f532).
      return true;
    }
    return !current.filter().equals(wanted) || check(namespace, current, now).isPresent();
  }

  /**
   * A namespace whose pods kvguard cannot see as they are: its watch has been down longer than
   * {@link WatchLoss#BOUND} and listing it anew had its WATCH refused, or for that long every start
   * of an informer there listed it and then had its WATCH refused (nothing of it cached, or its
   * selectors changed so that no pass can read the cache it has).
   *
   * @param since since when
   * @param listed what the last refused start listed, when nothing of the namespace is cached
   *     (null: the pods are the cache's, as the lost watch left them)
   */
  record Refused(Instant since, LeanPodStore listed) {}

  /** Whether the namespace's pods are {@link Refused} now. */
  Optional<Refused> refused(String namespace, Instant now) {
    Namespace state = namespaces.get(namespace);
    if (state == null) {
      return Optional.empty();
    }
    Optional<Instant> startsRefused = state.refusedStarts.lostLongerThan(WatchLoss.BOUND, now);
    Cached cached = byNamespace.get(namespace);
    // A LIST that failed since the run of refused starts began (an outage, a LIST shed) leaves it
    // as it was: kvguard has still not seen the pods as they are since then. Were it to end the
    // run, or silence it, LISTs failing every other time would keep a shut from ever coming
    // (review of 291d411).
    if (cached == null || cached.listedOnly()) {
      LeanPodStore listed = state.refusedList;
      return listed == null
          ? Optional.empty()
          : startsRefused.map(since -> new Refused(since, listed));
    }
    // A cached namespace's watch lost, and its relist's LIST failed: an outage, which shuts
    // nothing (its writes would fail too, and the watch comes back with the API server).
    Optional<Instant> watchLost =
        state.watchRefused == null ? Optional.empty() : check(namespace, cached, now);
    return watchLost.or(() -> startsRefused).map(since -> new Refused(since, null));
  }

  /** Samples a namespace's watch: since when it is lost; the loss is logged once. */
  private static Optional<Instant> check(String namespace, Cached cached, Instant now) {
    cached.watch().sample(cached.source().watching(), now);
    Optional<Instant> lost = cached.watch().lostLongerThan(WatchLoss.BOUND, now);
    if (lost.isPresent() && cached.watch().firstAnnouncement()) {
      LOG.warn(
          "the pods of namespace {} have not been watched since {} (kvguard's WATCH of pods fails or"
              + " is refused; its cache cannot show a container restart): every gate there is shut"
              + " until the watch works again",
          namespace,
          lost.get());
    }
    return lost;
  }

  /**
   * kvguard stops: every namespace informer still running is stopped, and any start after this
   * fails and stops its own. Called once JOSDK's operator has stopped (KvguardOperator.close).
   */
  void close() {
    closed = true;
    for (NamespacePodsEventSource source : List.copyOf(live)) {
      source.stop();
    }
  }

  /**
   * The namespaces whose pods are cached now, sorted. A LIST held for a deletion's pass counts only
   * where it stands in for the namespace's cache (put back after that pass): it is the fresher of
   * the two, and the stranded-pod count read from it does not drop to nothing meanwhile, which
   * would restart the alert's wait.
   */
  Set<String> namespaces() {
    Set<String> cached = new TreeSet<>();
    byNamespace.forEach(
        (namespace, held) -> {
          if (!held.listedOnly() || held.replaced() != null) {
            cached.add(namespace);
          }
        });
    return cached;
  }

  /** Whether the pod's namespace is cached and its cache keeps this pod whole. */
  boolean keeps(Pod pod) {
    Cached cached = byNamespace.get(pod.getMetadata().getNamespace());
    return cached != null && cached.filter().keeps(pod);
  }

  Optional<Pod> get(ResourceID pod) {
    return pod.getNamespace()
        .map(byNamespace::get)
        .flatMap(cached -> cached.source().get(pod))
        .filter(cached -> !LeanPodStore.isKeyOnly(cached))
        .map(cached -> ownWrites.current(cached, false));
  }

  /** The namespace's pods under {@code key} of one of {@link SelectionIndex}'s pod indexes. */
  @Override
  public List<Pod> byIndex(String namespace, String index, String key) {
    // kvguard's indexes are the store's own (LeanPodStore.byIndex) and file no pod held as a key.
    Cached cached = byNamespace.get(namespace);
    if (cached == null) {
      return List.of();
    }
    Function<Pod, List<String>> keys = SelectionIndex.podIndexers().get(index);
    List<Pod> indexed = cached.store().byIndex(index, key);
    if (keys == null) {
      return indexed.stream().map(pod -> ownWrites.current(pod, true)).toList();
    }
    // Our own writes the store has not indexed yet: a pass reads the verdict record the pass
    // before it wrote. Each is weighed against the store's copy, never the informer's get: that
    // answers from JOSDK's temporary cache first, which holds our last write until the pod's next
    // watch event, so the write read as shown by the store and was forgotten; the condition
    // write's event then left the store's older pod the only one known, and the next pass wrote
    // the label again and had it refused (ScaleBenchmarkIT, PodCacheOwnWritesTest).
    return ownWrites.overIndex(namespace, key, indexed, cached.store()::kept, keys);
  }

  @Override
  public Stream<Pod> list(String namespace) {
    Cached cached = byNamespace.get(namespace);
    return cached == null
        ? Stream.empty()
        : cached.store().kept().map(pod -> ownWrites.current(pod, true));
  }

  /**
   * A write the API server accepted, cached at once (lean, as the informer keeps it) so the next
   * pass reads it ({@link OwnWrites}) and the watch event of the write is known as ours (JOSDK's
   * temporary cache). {@code base}: the version the write was planned on.
   */
  void written(Pod written, Pod base) {
    written(written, base, base);
  }

  /**
   * As above; {@code read}: the version the pass read, older than {@code base} when the write was
   * planned again on a fresh read after a conflict ({@link OwnWrites#written(Pod, Pod, Pod)}).
   */
  void written(Pod written, Pod base, Pod read) {
    Cached cached = byNamespace.get(written.getMetadata().getNamespace());
    if (cached != null) {
      Pod lean = LeanPodStore.lean(written);
      ownWrites.written(lean, base, read);
      cached.source().handleRecentResourceUpdate(ResourceID.fromResource(written), lean, base);
    }
  }
}

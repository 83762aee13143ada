package io.kvguard.reconciler;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs probes on a set of threads, at most {@code perTenant} at once for one tenant (a namespace),
 * taking turns between tenants: each free thread serves the next tenant in round-robin order that
 * has work waiting and a slot free. So one namespace's hanging engines hold at most its own slots,
 * and every other namespace's work is next in line when a thread frees up (issue 20).
 *
 * <p>Hanging is made cheap (issue 28 §4): a tenant can create namespaces, and eight namespaces of
 * engines that never answer held all 32 threads for the whole probe timeout. A task that has run
 * longer than {@link Hung#after} is counted as <em>hung</em>: it leaves its tenant's share and the
 * pool's {@code threads} working slots, keeps its thread (the probe still ends at its own timeout
 * and still answers fail-closed), and a new thread takes its place. Hung tasks are bounded: at most
 * {@link Hung#limit} in all and {@link Hung#perTenant} for one tenant, so one tenant cannot take
 * the whole budget. A task past the threshold that finds no hung slot free stays where it is,
 * counted as working, until one frees: nothing is cut short and nothing opens a gate. Threads in
 * all: at most {@code threads + limit}.
 *
 * <p>Idle threads are lent (issue 28 §5): with {@code lends}, a thread that no tenant within its
 * share wants runs the next waiting task of a tenant past its share, so one namespace of 1,000 pods
 * is not probed four at a time while 28 threads wait. Whenever more tasks of tenants within their
 * share wait than working slots are free (counted over all tenants: a task that found a slot free
 * may see another within its share take it), a lent task whose tenant is still past its share is
 * moved out of the way: it keeps its thread, leaves the working slots, and a new thread takes the
 * slot, so a tenant's share never waits for another's lent probes, hanging or not. A thread is lent
 * only while the lent tasks in the working slots and the tasks moved aside number fewer than {@code
 * threads}, and never to a tenant that has hung tasks: moving a task aside leaves that count as it
 * is, so moved tasks are at most {@code threads} and threads in all at most {@code 2 × threads +
 * limit}. (Until a moved task ended, nothing was lent at all: one moved-aside probe whose engine
 * hangs stopped lending for its whole timeout.)
 */
final class TenantFairExecutor implements ProbeScheduler.ProbeQueue, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TenantFairExecutor.class);

  /**
   * When a running task counts as hung, and how many may. {@code limit} 0: never (the rule before
   * issue 28: a task holds its slot until it ends).
   */
  record Hung(Duration after, int limit, int perTenant) {
    static final Hung NEVER = new Hung(Duration.ofDays(1), 0, 0);

    Hung {
      if (after.isNegative() || after.isZero() || limit < 0 || perTenant < 0) {
        throw new IllegalArgumentException("hung threshold must be positive and limits at least 0");
      }
    }
  }

  /** Told, under the executor's lock, each time a tenant's count of hung tasks changes. */
  @FunctionalInterface
  interface HungCounts {
    void changed(String tenant, int hung);
  }

  private static final class Tenant {
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();

    /** Tasks running and not hung: these count against the tenant's share. */
    int running;

    /** Tasks running on threads lent past the share, moved out of the working slots. */
    int movedAside;

    int hung;
  }

  /** One task on a thread: when it started, and whether it has moved to the hung budget. */
  private static final class Running {
    final String tenant;
    final long startedNanos = System.nanoTime();
    boolean hung;

    /** Run on a thread lent past its tenant's share. */
    boolean lent;

    /** Lent, then moved out of the working slots for a tenant within its share. */
    boolean movedAside;

    Running(String tenant) {
      this.tenant = tenant;
    }
  }

  private final String name;
  private final int capacity;
  private final int perTenant;
  private final Hung hungRule;
  private final HungCounts hungCounts;
  private final Map<String, Tenant> tenants = new HashMap<>();

  /** Tenants with work waiting, in the order they get their next turn. */
  private final ArrayDeque<String> turns = new ArrayDeque<>();

  /** Tasks running and not hung, oldest first. */
  private final Set<Running> working = new LinkedHashSet<>();

  private final List<Thread> threads = new ArrayList<>();
  private final boolean lends;
  private int workers;
  private int hungTotal;
  private int movedAsideTotal;

  private int threadNumber;
  private boolean closed;

  TenantFairExecutor(String name, int threads, int perTenant) {
    this(name, threads, perTenant, Hung.NEVER, (tenant, hung) -> {}, false);
  }

  TenantFairExecutor(
      String name, int threads, int perTenant, Hung hung, HungCounts hungCounts, boolean lends) {
    if (threads < 1 || perTenant < 1) {
      throw new IllegalArgumentException("threads and perTenant must be at least 1");
    }
    this.name = name;
    this.capacity = threads;
    this.perTenant = perTenant;
    this.hungRule = hung;
    this.hungCounts = hungCounts;
    this.lends = lends;
    synchronized (this) {
      for (int i = 1; i <= threads; i++) {
        startWorker();
      }
      if (hung.limit() > 0) {
        Thread watch = new Thread(this::watch, name + "-hung-watch");
        watch.setDaemon(true);
        this.threads.add(watch);
        watch.start();
      }
    }
  }

  @Override
  public synchronized void submit(String tenant, Runnable task) {
    if (closed) {
      throw new RejectedExecutionException("probe executor closed");
    }
    Tenant queue = tenants.computeIfAbsent(tenant, t -> new Tenant());
    if (queue.waiting.isEmpty()) {
      turns.add(tenant);
    }
    queue.waiting.add(task);
    makeRoom();
    notifyAll();
  }

  /**
   * While more tasks of tenants within their share wait than working slots are free, moves lent
   * tasks aside, one for each task too many. Counted over every tenant, not the one submitting: a
   * task that found a slot free may see another within its share take it first (a colluding
   * namespace's hanging probe), and a tenant's hung task that ends widens its share with no submit
   * at all. Each task moved aside is a thread more, so only for tasks their share lets run now.
   */
  private void makeRoom() {
    if (!lends || closed) {
      return;
    }
    int free = capacity - working.size();
    int claims = 0;
    for (String next : turns) {
      Tenant tenant = tenants.get(next);
      claims += Math.min(tenant.waiting.size(), Math.max(0, share(tenant) - tenant.running));
      if (claims > free) {
        break;
      }
    }
    for (; claims > free; free++) {
      if (!moveALentTaskAside()) {
        return;
      }
    }
  }

  /**
   * The youngest lent task of a tenant still past its share leaves the working slots (it runs on,
   * on its thread) and a new thread takes its slot; false when there is none. A lent task whose
   * tenant's earlier tasks have ended is within its share now, and stays.
   */
  private boolean moveALentTaskAside() {
    Running youngest = null;
    for (Running one : working) {
      Tenant owner = tenants.get(one.tenant);
      if (one.lent && owner.running > share(owner)) {
        youngest = one;
      }
    }
    if (youngest == null) {
      return false;
    }
    working.remove(youngest);
    youngest.movedAside = true;
    Tenant owner = tenants.get(youngest.tenant);
    owner.running--;
    owner.movedAside++;
    movedAsideTotal++;
    startWorker();
    return true;
  }

  /** Tasks waiting and running (hung included) per tenant, for tests and metrics. */
  synchronized Map<String, int[]> load() {
    Map<String, int[]> load = new HashMap<>();
    tenants.forEach(
        (name, tenant) ->
            load.put(
                name,
                new int[] {
                  tenant.waiting.size(), tenant.running + tenant.hung + tenant.movedAside
                }));
    return load;
  }

  /** Hung tasks per tenant that has any (tests). */
  synchronized Map<String, Integer> hung() {
    Map<String, Integer> hung = new HashMap<>();
    tenants.forEach(
        (name, tenant) -> {
          if (tenant.hung > 0) {
            hung.put(name, tenant.hung);
          }
        });
    return hung;
  }

  /** Working slots taken by tasks run within their tenant's share, not lent (tests). */
  synchronized int unlentWorkingSlots() {
    return (int) working.stream().filter(one -> !one.lent).count();
  }

  /** Threads alive now, the watcher included (tests: bounded by threads + limit + 1). */
  synchronized int threadCount() {
    return (int) threads.stream().filter(Thread::isAlive).count();
  }

  private void startWorker() {
    Thread thread = new Thread(this::work, name + "-" + ++threadNumber);
    thread.setDaemon(true);
    threads.add(thread);
    workers++;
    thread.start();
  }

  private synchronized boolean closed() {
    return closed;
  }

  private void work() {
    while (true) {
      Running mine;
      Runnable task;
      synchronized (this) {
        String next = nextTurn();
        while (next == null && !closed) {
          try {
            wait();
          } catch (InterruptedException e) {
            return;
          }
          next = nextTurn();
        }
        if (next == null) {
          return;
        }
        Tenant queue = tenants.get(next);
        task = queue.waiting.poll();
        mine = new Running(next);
        mine.lent = queue.running >= share(queue);
        queue.running++;
        working.add(mine);
        if (!queue.waiting.isEmpty()) {
          turns.add(next);
        }
        notifyAll(); // the watcher times the new task
      }
      try {
        task.run();
      } catch (Throwable e) {
        // The task's own handling failed (ProbeScheduler turns a probe's failure into a result):
        // say so loudly, and keep the thread, so the pool does not shrink one Error at a time.
        LOG.error("probe task threw tenant={} error={}", mine.tenant, e.toString(), e);
      }
      // A task that left its thread interrupted (a probe restoring an interrupt it caught) would
      // make the next wait throw and the worker leave uncounted: the pool one thread short for
      // good. Only close() interrupts the pool's own threads, and it sets closed first.
      if (Thread.interrupted() && closed()) {
        return;
      }
      if (!finished(mine)) {
        return;
      }
    }
  }

  /**
   * The first tenant in turn order with a free slot, taken out of the turn order; null when none
   * can run, or every working slot of the pool is taken.
   */
  private String nextTurn() {
    if (working.size() >= capacity) {
      return null;
    }
    for (int i = turns.size(); i > 0; i--) {
      String tenant = turns.poll();
      if (tenants.get(tenant).running < share(tenants.get(tenant))) {
        return tenant;
      }
      turns.add(tenant);
    }
    if (!lends || lentWorking() + movedAsideTotal >= capacity) {
      return null;
    }
    // No tenant within its share waits: lend the thread, in turn order, to one with no hung task.
    for (int i = turns.size(); i > 0; i--) {
      String tenant = turns.poll();
      if (tenants.get(tenant).hung == 0) {
        return tenant;
      }
      turns.add(tenant);
    }
    return null;
  }

  /**
   * Lent tasks in the working slots: counted, not kept, so no way out of the slots (an end, a move
   * aside, a move to the hung budget) can leave it wrong. At most {@code threads} to look at.
   */
  private int lentWorking() {
    int lent = 0;
    for (Running one : working) {
      if (one.lent) {
        lent++;
      }
    }
    return lent;
  }

  /**
   * Tells the meter a tenant's hung count. Nothing it throws may reach the bookkeeping around it:
   * thrown in {@link #watch}, it ended the watcher (no probe was ever moved to the hung budget
   * again, so hanging probes held their slots for good) and lost the slot of the task just moved;
   * thrown in {@link #finished}, it ended the thread with the task's end half booked.
   */
  private void tellHung(String tenant, int hung) {
    try {
      hungCounts.changed(tenant, hung);
    } catch (RuntimeException e) {
      LOG.warn(
          "cannot record the hung probes of namespace {} ({}): {}", tenant, hung, e.toString());
    }
  }

  /**
   * How many working slots the tenant may hold: its share less its hung tasks, but at least one. A
   * tenant's hung tasks were its working ones: given back as working slots, its next tasks took
   * them, hung too and, its hung share full, kept them, so eight namespaces of eight hanging probes
   * (four hung and four working each) held all 32 threads. Counted this way a tenant holds at most
   * its share, or its hung share plus one, threads; filling the 32 takes 32 namespaces. Without a
   * hung budget nothing is hung and the share is whole.
   */
  private int share(Tenant tenant) {
    return Math.max(1, perTenant - tenant.hung);
  }

  /**
   * Books the end of a task; whether its thread goes on serving (a thread that carried a hung task
   * ends when the pool has one more than it needs).
   */
  private synchronized boolean finished(Running done) {
    Tenant queue = tenants.get(done.tenant);
    if (done.hung) {
      queue.hung--;
      hungTotal--;
      tellHung(done.tenant, queue.hung);
    } else if (done.movedAside) {
      queue.movedAside--;
      movedAsideTotal--;
    } else {
      queue.running--;
      working.remove(done);
    }
    if (queue.running == 0 && queue.hung == 0 && queue.movedAside == 0 && queue.waiting.isEmpty()) {
      tenants.remove(done.tenant);
    }
    makeRoom(); // a hung task that ended widened its tenant's share
    notifyAll();
    if (workers > capacity + hungTotal + movedAsideTotal) {
      workers--;
      threads.remove(Thread.currentThread());
      return false;
    }
    return true;
  }

  /**
   * Moves tasks running longer than the threshold to the hung budget, oldest first, while it has
   * room for their tenant; sleeps until the next task is due or something changes.
   */
  private void watch() {
    long afterNanos = hungRule.after().toNanos();
    synchronized (this) {
      while (!closed) {
        long now = System.nanoTime();
        long nextDue = 0;
        for (Iterator<Running> it = working.iterator(); it.hasNext(); ) {
          Running one = it.next();
          long due = one.startedNanos + afterNanos;
          if (due - now > 0) {
            nextDue = due;
            break; // the rest started later
          }
          Tenant tenant = tenants.get(one.tenant);
          if (hungTotal < hungRule.limit() && tenant.hung < hungRule.perTenant()) {
            it.remove();
            one.hung = true;
            tenant.running--;
            tenant.hung++;
            hungTotal++;
            tellHung(one.tenant, tenant.hung);
            startWorker(); // takes the working slot the hung task left
            notifyAll();
          }
          // else: no hung slot for it; it stays working and is tried again when one frees.
        }
        try {
          if (nextDue == 0) {
            wait();
          } else {
            TimeUnit.NANOSECONDS.timedWait(this, Math.max(1, nextDue - now));
          }
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  @Override
  public void close() {
    List<Thread> all;
    synchronized (this) {
      closed = true;
      tenants.values().forEach(t -> t.waiting.clear());
      turns.clear();
      notifyAll();
      all = List.copyOf(threads);
    }
    all.forEach(Thread::interrupt);
  }

  /** Waits for the threads to end after {@link #close()} (tests). */
  boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    List<Thread> all;
    synchronized (this) {
      all = List.copyOf(threads);
    }
    for (Thread thread : all) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
    return all.stream().noneMatch(Thread::isAlive);
  }
}

package io.kvguard.reconciler;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs probes on a fixed set of threads, at most {@code perTenant} at once for one tenant (a
 * namespace), taking turns between tenants: each free thread serves the next tenant in round-robin
 * order that has work waiting and a slot free. So one namespace's hanging engines hold at most its
 * own slots, and every other namespace's work is next in line when a thread frees up (issue 20: one
 * pod that never answers, selected by 40 policies, kept every tenant's new pods shut).
 */
final class TenantFairExecutor implements ProbeScheduler.ProbeQueue, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TenantFairExecutor.class);

  private static final class Tenant {
    final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
    int running;
  }

  private final int perTenant;
  private final Map<String, Tenant> tenants = new HashMap<>();

  /** Tenants with work waiting, in the order they get their next turn. */
  private final ArrayDeque<String> turns = new ArrayDeque<>();

  private final List<Thread> threads = new ArrayList<>();
  private boolean closed;

  TenantFairExecutor(String name, int threads, int perTenant) {
    if (threads < 1 || perTenant < 1) {
      throw new IllegalArgumentException("threads and perTenant must be at least 1");
    }
    this.perTenant = perTenant;
    for (int i = 1; i <= threads; i++) {
      Thread thread = new Thread(this::work, name + "-" + i);
      thread.setDaemon(true);
      this.threads.add(thread);
      thread.start();
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
    notifyAll();
  }

  /** Tasks waiting and running per tenant, for tests and metrics. */
  synchronized Map<String, int[]> load() {
    Map<String, int[]> load = new HashMap<>();
    tenants.forEach(
        (name, tenant) -> load.put(name, new int[] {tenant.waiting.size(), tenant.running}));
    return load;
  }

  private void work() {
    while (true) {
      String tenant;
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
        tenant = next;
        Tenant queue = tenants.get(tenant);
        task = queue.waiting.poll();
        queue.running++;
        if (!queue.waiting.isEmpty()) {
          turns.add(tenant);
        }
      }
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.warn("probe task threw tenant={} error={}", tenant, e.toString());
      } finally {
        finished(tenant);
      }
    }
  }

  /**
   * The first tenant in turn order with a free slot, taken out of the turn order; null when none
   * can run.
   */
  private String nextTurn() {
    for (int i = turns.size(); i > 0; i--) {
      String tenant = turns.poll();
      if (tenants.get(tenant).running < perTenant) {
        return tenant;
      }
      turns.add(tenant);
    }
    return null;
  }

  private synchronized void finished(String tenant) {
    Tenant queue = tenants.get(tenant);
    queue.running--;
    if (queue.running == 0 && queue.waiting.isEmpty()) {
      tenants.remove(tenant);
    }
    notifyAll();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      tenants.values().forEach(t -> t.waiting.clear());
      turns.clear();
      notifyAll();
    }
    threads.forEach(Thread::interrupt);
  }

  /** Waits for the threads to end after {@link #close()} (tests). */
  boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    for (Thread thread : threads) {
      thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
    return threads.stream().noneMatch(Thread::isAlive);
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TenantFairExecutorTest {
  private final CountDownLatch hang = new CountDownLatch(1);
  private TenantFairExecutor executor;

  @AfterEach
  void stop() throws InterruptedException {
    hang.countDown();
    executor.close();
    assertThat(executor.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
  }

  private Runnable hanging() {
    return () -> {
      try {
        hang.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  @Test
  void aNamespaceOfHangingProbesHoldsOnlyItsOwnSlots() {
    executor = new TenantFairExecutor("test-probe", 8, 2);
    for (int i = 0; i < 40; i++) {
      executor.submit("attacker", hanging());
    }
    CountDownLatch innocent = new CountDownLatch(3);
    for (String tenant : List.of("team-a", "team-b", "team-c")) {
      executor.submit(tenant, innocent::countDown);
    }

    await().atMost(Duration.ofSeconds(2)).until(() -> innocent.getCount() == 0);
    assertThat(executor.load().get("attacker")).containsExactly(38, 2);
  }

  /** The main probe executor as ProbeBook makes it with the chart's limits (32, 4, 256). */
  private static TenantFairExecutor asProbeBookMakesIt() {
    return new TenantFairExecutor(
        "test-probe",
        32,
        4,
        new TenantFairExecutor.Hung(ProbeLimits.DEFAULT_HUNG_AFTER, 256, 4),
        (tenant, hung) -> {},
        true);
  }

  /** The main probe executor as ProbeBook makes it, lending idle threads, without a hung budget. */
  private static TenantFairExecutor lending(int threads, int perTenant) {
    return new TenantFairExecutor(
        "test-probe", threads, perTenant, TenantFairExecutor.Hung.NEVER, (t, h) -> {}, true);
  }

  @Test
  void aNamespaceAloneIsLentEveryIdleThread() throws Exception {
    // One namespace of many pods (ScaleBenchmark's 1,000): its probes are not run two at a time
    // while six threads wait.
    executor = lending(8, 2);
    CountDownLatch started = new CountDownLatch(8);
    for (int i = 0; i < 8; i++) {
      executor.submit(
          "only",
          () -> {
            started.countDown();
            hanging().run();
          });
    }
    assertThat(started.await(2, TimeUnit.SECONDS)).as("all eight running at once").isTrue();
  }

  @Test
  void lentThreadsHungByOneNamespaceDoNotDelayAnotherWithinItsShare() {
    // The attacker, alone at first, is lent every thread and its engines never answer; no hung
    // budget frees anything. The others' probes still run at once: a lent task makes room.
    executor = lending(8, 2);
    for (int i = 0; i < 40; i++) {
      executor.submit("attacker", hanging());
    }
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("attacker")[1] == 8);
    CountDownLatch innocent = new CountDownLatch(3);
    for (String tenant : List.of("team-a", "team-b", "team-c")) {
      executor.submit(tenant, innocent::countDown);
    }

    await().atMost(Duration.ofSeconds(2)).until(() -> innocent.getCount() == 0);
    assertThat(executor.threadCount()).isLessThanOrEqualTo(8 + 8);
  }

  @Test
  void lentAndMovedAsideTasksNumberAtMostThePoolAndTheThreadsStayBounded() {
    executor = lending(8, 2);
    for (int i = 0; i < 40; i++) {
      executor.submit("attacker", hanging());
    }
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("attacker")[1] == 8);
    CountDownLatch innocent = new CountDownLatch(200);
    for (int i = 0; i < 200; i++) {
      executor.submit("team-" + (i % 4), innocent::countDown);
    }

    await().atMost(Duration.ofSeconds(5)).until(() -> innocent.getCount() == 0);
    // Its lent tasks moved aside for the others and never end; lent and moved together are at most
    // 8 (a thread lent between two of the others' arrivals may be moved aside too), so it runs its
    // share and those 8, and no more: 10 run, 30 wait.
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("attacker")[1] == 10);
    assertThat(executor.load().get("attacker")).containsExactly(30, 10);
    // 8 working threads + at most 8 carrying moved tasks: 2 x threads.
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 8);
  }

  @Test
  void aMovedAsideTaskThatHangsDoesNotStopLending() throws Exception {
    // A namespace alone is lent the idle thread; another arrives and the lent probe steps aside,
    // and its engine never answers. Once the other is done the lone namespace is lent the idle
    // thread again: before, nothing was lent until the moved probe ended (its whole timeout, 300 s
    // at most), and a namespace of 1,000 pods was probed at its share meanwhile.
    executor = lending(2, 1);
    executor.submit("fleet", hanging());
    executor.submit("fleet", hanging()); // lent
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("fleet")[1] == 2);
    CountDownLatch teamRuns = new CountDownLatch(1);
    CountDownLatch teamMayEnd = new CountDownLatch(1);
    executor.submit(
        "team",
        () -> {
          teamRuns.countDown();
          try {
            teamMayEnd.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(teamRuns.await(2, TimeUnit.SECONDS)).as("the team's probe ran").isTrue();
    teamMayEnd.countDown();
    await().atMost(Duration.ofSeconds(2)).until(() -> !executor.load().containsKey("team"));

    CountDownLatch lentAgain = new CountDownLatch(1);
    executor.submit("fleet", lentAgain::countDown);

    assertThat(lentAgain.await(2, TimeUnit.SECONDS)).as("the idle thread was lent again").isTrue();
    // Two working threads and the one that carries the moved probe.
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 2);
  }

  /** A task that runs until the latch is counted down. */
  private static Runnable until(CountDownLatch latch) {
    return () -> {
      try {
        latch.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  @Test
  void everyThreadIsLentAgainOnceLentProbesHaveEndedEveryWayTheyCan() throws Exception {
    // Review of c4f4946: lending is gated by the count of lent probes in the working slots. A lent
    // probe leaves them each way it can: it ends (or throws), passes the hung threshold, or is
    // moved
    // aside. A way that left the count wrong would take one lendable thread away for good each
    // time, until nothing was lent at all. Here a lent probe leaves each way; then the last idle
    // thread must still be lent, as it is only if the count is exactly the lent probes that run.
    executor =
        new TenantFairExecutor(
            "test-probe",
            3,
            1,
            // Two hung slots in all: filled in the first step and held to the end, so no later
            // probe can pass the threshold; long enough that the first three start before it.
            new TenantFairExecutor.Hung(Duration.ofMillis(250), 2, 2),
            (tenant, hung) -> {},
            true);

    // A lent probe passes the hung threshold: "slow" runs one within its share and two lent; the
    // oldest two take the hung budget, the third finds it spent and stays working until it ends.
    CountDownLatch thirdEnds = new CountDownLatch(1);
    submitTogether(
        List.of("slow", "slow", "slow"), List.of(hanging(), hanging(), until(thirdEnds)));
    await().atMost(Duration.ofSeconds(3)).until(() -> executor.hung().equals(Map.of("slow", 2)));
    thirdEnds.countDown(); // a lent probe ends
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("slow")[1] == 2);

    // Two lent probes end, one of them by throwing.
    CountDownLatch ownEnds = new CountDownLatch(1);
    submitTogether(
        List.of("fleet", "fleet", "fleet"),
        List.of(
            until(ownEnds), // within its share, to the last step
            () -> {
              throw new IllegalStateException("thrown by a test probe");
            },
            () -> {}));
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("fleet")[1] == 1);

    // A lent probe is moved aside for a namespace within its share, and ends there.
    CountDownLatch lentEnd = new CountDownLatch(1);
    executor.submit("fleet", until(lentEnd));
    executor.submit("fleet", until(lentEnd));
    await("fleet lent two threads")
        .atMost(Duration.ofSeconds(2))
        .until(() -> executor.load().get("fleet")[1] == 3);
    CountDownLatch teamRuns = new CountDownLatch(1);
    CountDownLatch teamEnds = new CountDownLatch(1);
    executor.submit(
        "team",
        () -> {
          teamRuns.countDown();
          until(teamEnds).run();
        });
    assertThat(teamRuns.await(2, TimeUnit.SECONDS)).as("the team's probe ran").isTrue();
    teamEnds.countDown();
    lentEnd.countDown();
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> !executor.load().containsKey("team") && executor.load().get("fleet")[1] == 1);

    // Nothing lent runs now. Lent two, fleet holds every working slot; when its probe within its
    // share ends, the freed slot must be lent to its next probe too.
    executor.submit("fleet", hanging());
    executor.submit("fleet", hanging());
    await("fleet lent two threads again")
        .atMost(Duration.ofSeconds(2))
        .until(() -> executor.load().get("fleet")[1] == 3);
    ownEnds.countDown();
    CountDownLatch lastLent = new CountDownLatch(1);
    executor.submit("fleet", lastLent::countDown);

    assertThat(lastLent.await(2, TimeUnit.SECONDS)).as("the freed thread was lent").isTrue();
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 3 + 2 + 1);
  }

  /**
   * Submits the tasks as one batch: no worker takes one before the last is queued, as when the
   * scheduler's pass queues many pods' probes before a woken worker gets the executor's lock.
   */
  private void submitTogether(List<String> tenants, List<Runnable> tasks) {
    synchronized (executor) {
      for (int i = 0; i < tenants.size(); i++) {
        executor.submit(tenants.get(i), tasks.get(i));
      }
    }
  }

  @Test
  void twoNamespacesWithinTheirShareArrivingForOneFreeThreadDoNotWaitBehindALentTask()
      throws Exception {
    // Review of the lending change: a task within its share moved a lent one aside only if it
    // found every working slot taken when it was submitted. Here one slot is free and two arrive:
    // a colluding namespace's hanging probe takes it, and the innocent one, which found a slot free
    // too, waited behind the attacker's lent task for good.
    executor = lending(3, 1);
    CountDownLatch lentEnds = new CountDownLatch(1);
    executor.submit("attacker", hanging());
    executor.submit("attacker", hanging()); // lent
    executor.submit(
        "attacker",
        () -> {
          try {
            lentEnds.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }); // lent
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("attacker")[1] == 3);
    lentEnds.countDown();
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("attacker")[1] == 2);

    CountDownLatch innocent = new CountDownLatch(1);
    submitTogether(List.of("colluder", "innocent"), List.of(hanging(), innocent::countDown));

    assertThat(innocent.await(2, TimeUnit.SECONDS))
        .as("the innocent namespace's probe ran")
        .isTrue();
    assertThat(executor.threadCount()).isLessThanOrEqualTo(3 + 1);
  }

  @Test
  void aFewNamespacesWithFullHungSharesTakeTheFreeThreadsAndAnInnocentOneStillRunsAtOnce() {
    // Issue 28 §4 with lending, production limits: one namespace of many hanging pods is lent
    // every thread and keeps 28 working once its hung share is full; four namespaces whose hung
    // shares are full each queue one more hanging probe, with an innocent pod's, in one pass. The
    // four take the four free threads, and the innocent one waited for the probe timeout.
    executor = asProbeBookMakesIt();
    List<String> full = List.of("full-1", "full-2", "full-3", "full-4");
    for (String tenant : full) {
      for (int pod = 0; pod < 4; pod++) {
        executor.submit(tenant, hanging());
      }
    }
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                executor.hung().equals(Map.of("full-1", 4, "full-2", 4, "full-3", 4, "full-4", 4)));
    for (int pod = 0; pod < 100; pod++) {
      executor.submit("lender", hanging());
    }
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                executor.hung().getOrDefault("lender", 0) == 4
                    && executor.load().get("lender")[1] == 32);

    long submitted = System.nanoTime();
    AtomicLong ranAfter = new AtomicLong(-1);
    submitTogether(
        List.of("full-1", "full-2", "full-3", "full-4", "innocent"),
        List.of(
            hanging(),
            hanging(),
            hanging(),
            hanging(),
            () -> ranAfter.set(System.nanoTime() - submitted)));

    await().atMost(Duration.ofSeconds(2)).until(() -> ranAfter.get() >= 0);
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 32 + 256 + 1);
  }

  @Test
  void aLentTaskWhoseNamespaceIsBackWithinItsShareIsNotMovedAside() throws Exception {
    // Review of the lending change: once the lender's task within its share ends, its lent one is
    // its share; moving it aside would cost a thread and make room only for the lender's own next.
    executor = lending(2, 1);
    CountDownLatch firstEnds = new CountDownLatch(1);
    executor.submit(
        "lender",
        () -> {
          try {
            firstEnds.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    executor.submit("lender", hanging()); // lent
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("lender")[1] == 2);
    firstEnds.countDown();
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("lender")[1] == 1);
    executor.submit("team-a", hanging());
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("team-a")[1] == 1);

    executor.submit("team-b", hanging());
    // Moved aside (or not) within submit: no thread was added.
    assertThat(executor.threadCount()).isEqualTo(2);
    assertThat(executor.load().get("team-b")).containsExactly(1, 0);
  }

  @Test
  void colludingNamespacesMoveAsideAtMostTheLentTasksAndEveryThreadIsGivenBack() {
    // Review of the lending change: lent tasks that go hung, lent tasks moved aside, and twenty
    // colluding namespaces of hanging probes taking turns with the lender. Threads stay within
    // 2 x threads + limit (+ the watcher), and once the probes end the pool is back to its size.
    executor =
        new TenantFairExecutor(
            "test-probe",
            4,
            1,
            new TenantFairExecutor.Hung(Duration.ofMillis(50), 2, 1),
            (tenant, hung) -> {},
            true);
    for (int i = 0; i < 50; i++) {
      executor.submit("lender", hanging());
    }
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.hung().equals(Map.of("lender", 1)));
    for (int i = 0; i < 20; i++) {
      executor.submit("colluder-" + i, hanging());
      executor.submit("lender", hanging());
      executor.submit("colluder-" + i, hanging());
    }
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> executor.hung().values().stream().mapToInt(Integer::intValue).sum() == 2);
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 4 + 2 + 1);
    // The lender's three lent tasks moved aside, nothing lent since: it still runs four.
    assertThat(executor.load().get("lender")).containsExactly(50 + 20 - 4, 4);

    hang.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.load().isEmpty());
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.threadCount() == 4 + 1);
  }

  @Test
  void aHungTaskThatEndsWidensItsNamespacesShareAndALentTaskMakesRoomAtOnce() throws Exception {
    // Review of lending (2): no test covered the makeRoom() in finished(). The budget (one hung
    // task) holds a's first probe, so a's share is one; its second runs, its third waits. The
    // lender fills the other slots, one lent. When a's hung probe ends its share is two again and
    // its third may run: a lent task moves aside at once, not when the watcher (2 s) next moves
    // something to the hung budget.
    executor =
        new TenantFairExecutor(
            "test-probe",
            4,
            2,
            new TenantFairExecutor.Hung(Duration.ofSeconds(2), 1, 1),
            (tenant, hung) -> {},
            true);
    CountDownLatch firstEnds = new CountDownLatch(1);
    executor.submit(
        "a",
        () -> {
          try {
            firstEnds.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    await().atMost(Duration.ofSeconds(4)).until(() -> executor.hung().equals(Map.of("a", 1)));
    CountDownLatch third = new CountDownLatch(1);
    submitTogether(
        List.of("a", "a", "lender", "lender", "lender", "lender"),
        List.of(hanging(), third::countDown, hanging(), hanging(), hanging(), hanging()));
    await()
        .atMost(Duration.ofSeconds(1))
        .until(() -> executor.load().get("lender")[1] == 3 && executor.load().get("a")[1] == 2);
    assertThat(executor.load().get("a")).containsExactly(1, 2);

    firstEnds.countDown();
    assertThat(third.await(1, TimeUnit.SECONDS)).as("a's third ran within its share").isTrue();
    assertThat(executor.hung()).isEmpty();
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 * 4 + 1 + 1);
  }

  @Test
  void freedThreadsServeNamespacesInTurn() throws Exception {
    executor = new TenantFairExecutor("test-probe", 1, 1);
    CountDownLatch first = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    executor.submit(
        "a",
        () -> {
          running.countDown();
          try {
            first.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(running.await(2, TimeUnit.SECONDS)).isTrue();
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      executor.submit("a", () -> order.add("a"));
    }
    executor.submit("b", () -> order.add("b"));
    executor.submit("c", () -> order.add("c"));
    first.countDown();

    await().atMost(Duration.ofSeconds(2)).until(() -> order.size() == 5);
    // a's three came first, but b and c each get a turn before a's second.
    assertThat(order).containsExactly("a", "b", "c", "a", "a");
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().isEmpty());
  }

  /**
   * Sixteen namespaces of four probes that never end, as issue 28 §4 measured them, running on
   * every thread before anything else arrives.
   */
  private void sixteenNamespacesOfFourHangingProbes() {
    for (int ns = 0; ns < 16; ns++) {
      for (int pod = 0; pod < 4; pod++) {
        executor.submit("hang-" + ns, hanging());
      }
    }
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> executor.load().values().stream().mapToInt(load -> load[1]).sum() >= 32);
  }

  @Test
  void sixteenNamespacesOfHangingProbesDoNotHoldTheThreadsAnotherNamespaceNeeds() {
    executor = asProbeBookMakesIt();
    sixteenNamespacesOfFourHangingProbes();
    long submitted = System.nanoTime();
    AtomicLong ranAfter = new AtomicLong(-1);
    executor.submit("innocent", () -> ranAfter.set(System.nanoTime() - submitted));

    // Within one probe period (2 s in the scenario): the innocent probe waits at most for
    // the hanging probes in its way to pass the hung threshold (0.5 s).
    await().atMost(Duration.ofSeconds(2)).until(() -> ranAfter.get() >= 0);
    // All 64 end up hung, none working: every working thread is free for other namespaces.
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                executor.hung().size() == 16
                    && executor.hung().values().stream().allMatch(hung -> hung == 4));
    assertThat(executor.threadCount()).isLessThanOrEqualTo(32 + 64 + 1);
  }

  @Test
  void eightNamespacesOfEightHangingProbesDoNotHoldTheThreadsAnotherNamespaceNeeds() {
    // Four of each namespace's probes fill its hung share; before, the next four kept their working
    // slots, and the eight namespaces held all 32 threads.
    executor = asProbeBookMakesIt();
    for (int ns = 0; ns < 8; ns++) {
      for (int pod = 0; pod < 8; pod++) {
        executor.submit("hang-" + ns, hanging());
      }
    }
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                executor.hung().size() == 8
                    && executor.hung().values().stream().allMatch(hung -> hung == 4));
    long submitted = System.nanoTime();
    AtomicLong ranAfter = new AtomicLong(-1);
    executor.submit("innocent", () -> ranAfter.set(System.nanoTime() - submitted));

    await().atMost(Duration.ofSeconds(2)).until(() -> ranAfter.get() >= 0);
    // Each namespace holds at most one working slot past its hung share: 8 of the 32 (and the
    // innocent's, until its end is booked). Not load(): with lending, the first namespace's
    // probes 5 to 8 may be lent before the others arrive; moved aside for them, they run on
    // threads of their own, and if they passed the hung threshold first, they keep working slots
    // nobody else claims. Either way they are lent, not its share.
    assertThat(executor.unlentWorkingSlots()).isLessThanOrEqualTo(8 + 1);
  }

  @Test
  void aNamespaceLentThreadsBeforeSevenOthersArriveInOnePassMakesRoomForAllOfThem() {
    // Review of the lending change: the test above, with the order its loop may run in. The first
    // namespace's eight all run (four lent) before the other seven queue theirs in one pass; each
    // of those found a slot free, none moved a lent task aside, and the last namespace's four
    // waited behind the lent probes until something passed the hung threshold (here 5 s, so the
    // wait is seen; at 0.5 s the first namespace then kept four working slots past its hung share).
    executor =
        new TenantFairExecutor(
            "test-probe",
            32,
            4,
            new TenantFairExecutor.Hung(Duration.ofSeconds(5), 256, 4),
            (tenant, hung) -> {},
            true);
    for (int pod = 0; pod < 8; pod++) {
      executor.submit("hang-0", hanging());
    }
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().get("hang-0")[1] == 8);
    List<String> tenants = new ArrayList<>();
    List<Runnable> tasks = new ArrayList<>();
    for (int ns = 1; ns < 8; ns++) {
      for (int pod = 0; pod < 8; pod++) {
        tenants.add("hang-" + ns);
        tasks.add(hanging());
      }
    }
    submitTogether(tenants, tasks);

    await()
        .atMost(Duration.ofSeconds(2))
        .until(
            () ->
                executor.load().entrySet().stream()
                    .filter(e -> !e.getKey().equals("hang-0"))
                    .allMatch(e -> e.getValue()[1] == 4));
    assertThat(executor.unlentWorkingSlots()).isEqualTo(32);
    assertThat(executor.threadCount()).isLessThanOrEqualTo(32 + 4 + 1);
  }

  @Test
  void underTheRuleBeforeTheSameNamespacesKeepAnotherNamespaceWaiting() {
    // What issue 28 §4 measured: no hung budget, 8 namespaces' hanging probes fill the 32 threads.
    executor = new TenantFairExecutor("test-probe", 32, 4);
    sixteenNamespacesOfFourHangingProbes();
    CountDownLatch innocent = new CountDownLatch(1);
    executor.submit("innocent", innocent::countDown);

    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> innocent.getCount() == 1);
  }

  @Test
  void theHungBudgetIsBoundedInAllAndPerNamespaceAndItsThreadsGoWhenTheProbesEnd() {
    Map<String, Integer> gauge = new ConcurrentHashMap<>();
    executor =
        new TenantFairExecutor(
            "test-probe",
            2,
            2,
            new TenantFairExecutor.Hung(Duration.ofMillis(50), 3, 2),
            gauge::put,
            true);
    for (int i = 0; i < 5; i++) {
      executor.submit("a", hanging());
      executor.submit("b", hanging());
    }
    // a's first two hang first; a third of a's finds a's two hung slots taken, one of b's takes
    // the last slot of the three, and the next of b's finds the budget spent.
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> executor.hung().equals(Map.of("a", 2, "b", 1)));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> executor.load().get("a")[1] + executor.load().get("b")[1] == 5);
    assertThat(gauge).isEqualTo(Map.of("a", 2, "b", 1));
    // The budget is spent and both working slots are held: a third namespace waits, as before.
    CountDownLatch innocent = new CountDownLatch(1);
    executor.submit("c", innocent::countDown);
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(1))
        .until(() -> innocent.getCount() == 1);
    assertThat(executor.threadCount()).isLessThanOrEqualTo(2 + 3 + 1);

    hang.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> innocent.getCount() == 0);
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.load().isEmpty());
    assertThat(gauge).isEqualTo(Map.of("a", 0, "b", 0));
    // The threads that stood in for hung probes are gone: two workers and the watcher.
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.threadCount() == 2 + 1);
  }

  /**
   * The hung count is told to a meter: a meter that throws (a registry refusing a series) must not
   * cost the pool its watcher or a slot, or hanging probes would hold their slots for good.
   */
  @Test
  void aHungCountThatCannotBeRecordedStillFreesTheSlotAndTheWatcherGoesOn() {
    java.util.concurrent.atomic.AtomicInteger told =
        new java.util.concurrent.atomic.AtomicInteger();
    executor =
        new TenantFairExecutor(
            "test-probe",
            1,
            1,
            new TenantFairExecutor.Hung(Duration.ofMillis(50), 2, 2),
            (tenant, hung) -> {
              told.incrementAndGet();
              throw new IllegalArgumentException("a meter registry refused the series");
            },
            true);
    executor.submit("a", hanging());
    CountDownLatch second = new CountDownLatch(1);
    executor.submit("b", second::countDown);
    // a's probe hangs past the threshold: it is moved to the hung budget and b runs in its slot.
    await().atMost(Duration.ofSeconds(5)).until(() -> second.getCount() == 0);
    // The watcher still runs: a second hanging probe is moved to hung too, and c still runs.
    executor.submit("b", hanging());
    CountDownLatch third = new CountDownLatch(1);
    executor.submit("c", third::countDown);
    await().atMost(Duration.ofSeconds(5)).until(() -> third.getCount() == 0);
    assertThat(executor.hung()).isEqualTo(Map.of("a", 1, "b", 1));
    hang.countDown();
    // The ends are told too (and throw): the hung threads still go.
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.load().isEmpty());
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.threadCount() == 1 + 1);
    assertThat(told.get()).isEqualTo(4);
  }

  @Test
  void aTaskThatLeavesItsThreadInterruptedDoesNotCostThePoolItsThread() throws Exception {
    executor = new TenantFairExecutor("test-probe", 1, 1);
    CountDownLatch first = new CountDownLatch(1);
    executor.submit(
        "a",
        () -> {
          Thread.currentThread().interrupt();
          first.countDown();
        });
    assertThat(first.await(2, TimeUnit.SECONDS)).isTrue();
    // The worker is idle by now; a later task must still find it.
    await().atMost(Duration.ofSeconds(2)).until(() -> executor.load().isEmpty());
    CountDownLatch next = new CountDownLatch(1);
    executor.submit("a", next::countDown);

    await().atMost(Duration.ofSeconds(2)).until(() -> next.getCount() == 0);
    assertThat(executor.threadCount()).isEqualTo(1);
  }

  @Test
  void anErrorThrownByATaskDoesNotEndItsThread() {
    executor = new TenantFairExecutor("test-probe", 1, 1);
    executor.submit(
        "a",
        () -> {
          throw new StackOverflowError("thrown by a test probe");
        });
    CountDownLatch next = new CountDownLatch(1);
    executor.submit("a", next::countDown);

    await().atMost(Duration.ofSeconds(2)).until(() -> next.getCount() == 0);
    assertThat(executor.threadCount()).isEqualTo(1);
  }

  /**
   * Eight namespaces whose engines take the rejection prompt and never answer, on the rejection
   * executor as ProbeBook builds it with the default limits (4 threads, one per namespace).
   */
  private void eightNamespacesOfHangingRejectionProbes(ProbeLimits limits) {
    executor = ProbeBook.rejectionExecutor(limits, (tenant, hung) -> {});
    for (int ns = 0; ns < 8; ns++) {
      executor.submit("hang-" + ns, hanging());
    }
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> executor.load().values().stream().mapToInt(load -> load[1]).sum() >= 4);
  }

  @Test
  void eightNamespacesOfHangingRejectionProbesDoNotHoldTheThreadsAnotherNamespaceNeeds() {
    eightNamespacesOfHangingRejectionProbes(new ProbeLimits(32, 4, 4));
    CountDownLatch innocent = new CountDownLatch(1);
    executor.submit("innocent", innocent::countDown);

    // The hanging ones in its way pass the hung threshold (0.5 s) in two rounds of four.
    await().atMost(Duration.ofSeconds(2)).until(() -> innocent.getCount() == 0);
    await()
        .atMost(Duration.ofSeconds(3))
        .until(
            () ->
                executor.hung().size() == 8
                    && executor.hung().values().stream().allMatch(hung -> hung == 1));
    assertThat(executor.threadCount()).isLessThanOrEqualTo(4 + 8 + 1);
  }

  @Test
  void withoutAHungBudgetEightNamespacesOfHangingRejectionProbesKeepAnotherNamespaceWaiting() {
    // The rule before, and KVGUARD_HUNG_PROBE_LIMIT=0 now: four hanging namespaces hold the four
    // rejection threads for the whole rejection timeout.
    eightNamespacesOfHangingRejectionProbes(
        new ProbeLimits(32, 4, 4, 0, ProbeLimits.DEFAULT_HUNG_AFTER));
    CountDownLatch innocent = new CountDownLatch(1);
    executor.submit("innocent", innocent::countDown);

    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> innocent.getCount() == 1);
    assertThat(executor.hung()).isEmpty();
  }

  @Test
  void aNamespaceHoldsOneHungRejectionProbeAndItsNextHoldsItsWorkingSlot() {
    // One per namespace: the budget's bound, and what a tenant can still do with more pods.
    executor =
        ProbeBook.rejectionExecutor(
            new ProbeLimits(32, 4, 2, 256, Duration.ofMillis(50)), (tenant, hung) -> {});
    for (int i = 0; i < 3; i++) {
      executor.submit("hang", hanging());
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.hung().equals(Map.of("hang", 1)));
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.load().get("hang")[1] == 2);
    CountDownLatch innocent = new CountDownLatch(1);
    executor.submit("innocent", innocent::countDown);
    await().atMost(Duration.ofSeconds(2)).until(() -> innocent.getCount() == 0);
    assertThat(executor.load().get("hang")).containsExactly(1, 2);
  }

  // Review of lending (2): random submits (some batched), task ends and hung moves on small pools;
  // after each step, under the executor's lock, the bookkeeping is read (reflection) and checked:
  // running = the tenant's working tasks; its excess over its share <= its lent working tasks (so
  // a tenant past its share always has one to move); tasks within their share waiting > free
  // working slots only when no lent task can move (claim a); moved aside + lent working <= threads,
  // workers = threads + hung + moved aside, threads alive <= 2 x threads + limit + 1 (claim b);
  // turns = tenants with work waiting; at the end every tenant is gone and the pool is back to
  // size.
  private static Object field(Object o, String name) throws Exception {
    java.lang.reflect.Field f = o.getClass().getDeclaredField(name);
    f.setAccessible(true);
    return f.get(o);
  }

  private static int intField(Object o, String name) throws Exception {
    return ((Number) field(o, name)).intValue();
  }

  @SuppressWarnings("unchecked")
  private String check(int cap, int per, int limit) throws Exception {
    synchronized (executor) {
      Map<String, Object> tenants = (Map<String, Object>) field(executor, "tenants");
      java.util.Set<Object> working = (java.util.Set<Object>) field(executor, "working");
      java.util.ArrayDeque<String> turns = (java.util.ArrayDeque<String>) field(executor, "turns");
      int workers = intField(executor, "workers");
      int hungTotal = intField(executor, "hungTotal");
      int moved = intField(executor, "movedAsideTotal");
      if (workers != cap + hungTotal + moved)
        return "workers " + workers + " != " + cap + "+" + hungTotal + "+" + moved;
      if (moved > cap) return "moved " + moved;
      int lentWorking = 0;
      for (Object r : working) {
        if ((boolean) field(r, "lent")) lentWorking++;
      }
      if (moved + lentWorking > cap) return "moved " + moved + " + lent " + lentWorking;
      if (hungTotal > limit) return "hung " + hungTotal;
      if (working.size() > cap) return "working " + working.size();
      int claims = 0;
      int hsum = 0, msum = 0;
      boolean movable = false;
      for (var e : tenants.entrySet()) {
        Object t = e.getValue();
        int running = intField(t, "running");
        int hung = intField(t, "hung");
        hsum += hung;
        msum += intField(t, "movedAside");
        int share = Math.max(1, per - hung);
        int inWorking = 0, lent = 0;
        for (Object r : working) {
          if (field(r, "tenant").equals(e.getKey())) {
            inWorking++;
            if ((boolean) field(r, "lent")) lent++;
          }
        }
        if (inWorking != running)
          return e.getKey() + " running " + running + " in working " + inWorking;
        if (running - share > lent)
          return e.getKey() + " excess " + (running - share) + " > lent " + lent;
        if (running > share && lent > 0) movable = true;
        int waiting = ((java.util.ArrayDeque<?>) field(t, "waiting")).size();
        if ((waiting > 0) != turns.contains(e.getKey())) return e.getKey() + " turns";
        claims += Math.min(waiting, Math.max(0, share - running));
      }
      if (hsum != hungTotal || msum != moved) return "sums";
      if (claims > cap - working.size() && movable)
        return "claims " + claims + " free " + (cap - working.size()) + " with a movable lent task";
      int threads = executor.threadCount();
      if (threads > 2 * cap + limit + 1) return "threads " + threads;
      return null;
    }
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2, 3, 4})
  void randomSubmitsEndsAndHungMovesKeepTheBookkeepingAndTheClaims(int seed) throws Exception {
    java.util.Random rnd = new java.util.Random(seed);
    int cap = 1 + rnd.nextInt(6),
        per = 1 + rnd.nextInt(4),
        limit = rnd.nextInt(6),
        hper = rnd.nextInt(4);
    executor =
        new TenantFairExecutor(
            "test-probe",
            cap,
            per,
            limit == 0
                ? TenantFairExecutor.Hung.NEVER
                : new TenantFairExecutor.Hung(Duration.ofMillis(5 + rnd.nextInt(20)), limit, hper),
            (t, h) -> {},
            true);
    List<CountDownLatch> ends = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
    int steps = 0;
    while (System.nanoTime() < deadline) {
      int op = rnd.nextInt(10);
      if (op < 5) {
        CountDownLatch end = new CountDownLatch(1);
        ends.add(end);
        String tenant = "t" + rnd.nextInt(5);
        Runnable task =
            () -> {
              try {
                end.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            };
        if (rnd.nextBoolean()) {
          synchronized (executor) {
            executor.submit(tenant, task);
            executor.submit("t" + rnd.nextInt(4), task);
          }
        } else executor.submit(tenant, task);
      } else if (op < 8 && !ends.isEmpty()) {
        ends.remove(rnd.nextInt(ends.size())).countDown();
      } else {
        Thread.sleep(rnd.nextInt(15));
      }
      if (ends.size() > 30) {
        for (int i = 0; i < 10; i++) ends.remove(rnd.nextInt(ends.size())).countDown();
      }
      Thread.sleep(rnd.nextInt(3));
      String bad = check(cap, per, limit);
      assertThat(bad)
          .as("seed %d step %d cap %d per %d limit %d hper %d", seed, steps, cap, per, limit, hper)
          .isNull();
      steps++;
    }
    ends.forEach(CountDownLatch::countDown);
    int c = cap, l = limit;
    await().atMost(Duration.ofSeconds(5)).until(() -> executor.load().isEmpty());
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> executor.threadCount() == c + (l > 0 ? 1 : 0));
    assertThat(check(cap, per, limit)).isNull();
  }
}

package io.kvguard.faults;

import static io.kvguard.faults.FaultBudget.status;
import static io.kvguard.faults.FaultBudget.times;
import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.utils.CachedSingleThreadScheduler;
import io.fabric8.kubernetes.client.utils.Utils;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pod informer whose start fails after its LIST (its first WATCH refused) is deregistered by
 * PodCache, and JOSDK v5.2.3 then does not stop it: {@code ManagedInformerEventSource.stop} returns
 * at once for an event source that is not running, and {@code AbstractEventSource.running} is set
 * only after {@code InformerManager.start} returned, which threw. fabric8 v7.5.2 {@code
 * Reflector.startWatcher} (run once the LIST is stored) schedules the watch's periodic close on
 * {@code Utils.SHARED_SCHEDULER}, rescheduled every 5 to 10 minutes until {@code
 * Reflector.stopWatcher} cancels it, which only {@code stop()} calls; its delay supplier captures
 * the Reflector, and with it the informer's store. So every refused start left a task behind that
 * kept its whole LIST reachable for as long as the replica ran; while the WATCH is refused kvguard
 * retries the start each 30 to 60 s per namespace (review of d25d4d6).
 *
 * <p>A refused WATCH also leaves a task of another kind, which is not a leak: fabric8 v7.5.2 {@code
 * BaseOperation.submitWatch} closes the watch manager of a refused handshake ({@code watch.close()}
 * in its {@code finally}), and {@code AbstractWatchManager.closeRequest} schedules a one-shot
 * fail-safe check {@code watchEndCheckMs} (2 minutes) later, cancelled only when the request's
 * {@code ended} future completes, which a handshake that never opened never does ({@code
 * WatchConnectionManager.start} calls {@code watchEnded} only once {@code ready}). It holds the
 * refused start's store for those 2 minutes, then runs, finds the manager force-closed ({@code
 * failSafeReconnect}) and is gone. Nothing outside fabric8 holds that manager (the watch future the
 * Reflector got failed), so kvguard cannot cancel it; the test counts the watch timeouts only
 * (first due 5 to 10 minutes after they are scheduled, {@code Reflector.MIN_TIMEOUT}), as those due
 * later than the check's 2 minutes.
 */
class RefusedPodInformerLeakIT {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  /** fabric8 v7.5.2 {@code AbstractWatchManager.watchEndCheckMs}. */
  private static final Duration WATCH_END_CHECK = Duration.ofMinutes(2);

  private OperatorHarness h;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  /**
   * fabric8's shared scheduler's tasks due later than its watch manager's 2-minute fail-safe check
   * (fabric8 v7.5.2 {@code AbstractWatchManager.watchEndCheckMs}): informers' watch timeouts, each
   * first due 5 to 10 minutes after its informer's WATCH was asked for ({@code Reflector
   * .startWatcher}), so one of this test's (under a minute old) is due in 4 minutes or more.
   */
  private static long watchTimeoutsOnTheSharedScheduler() throws ReflectiveOperationException {
    Field shared = Utils.class.getDeclaredField("SHARED_SCHEDULER");
    shared.setAccessible(true);
    CachedSingleThreadScheduler scheduler = (CachedSingleThreadScheduler) shared.get(null);
    Field executor = CachedSingleThreadScheduler.class.getDeclaredField("executor");
    executor.setAccessible(true);
    synchronized (scheduler) {
      ScheduledThreadPoolExecutor pool = (ScheduledThreadPoolExecutor) executor.get(scheduler);
      if (pool == null) {
        return 0;
      }
      return pool.getQueue().stream()
          .filter(task -> ((Delayed) task).getDelay(TimeUnit.SECONDS) > WATCH_END_CHECK.toSeconds())
          .count();
    }
  }

  @Test
  void aPodInformerWhoseWatchWasRefusedIsStoppedNotLeftScheduled() throws Exception {
    // The scheduler is the JVM's, shared with the integration tests run before this one in the
    // same JVM: only what this test adds counts.
    long before = watchTimeoutsOnTheSharedScheduler();
    h = new OperatorHarness();
    FaultBudget refused =
        new FaultBudget(FaultBudget::operatorPodWatch, times(100_000, status(403, "Forbidden")));
    h.api.faults(refused);
    h.start(OperatorHarness.productionConfig(), () -> {});
    h.pod("serve-0", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    // JOSDK retries the failing pass after 2, 5, 9.5 s: a start, and a refused WATCH, each.
    await().atMost(Duration.ofSeconds(40)).until(() -> refused.injected() >= 3);

    // Every informer the operator started and still knows of is stopped with it.
    h.stopOperator();

    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(watchTimeoutsOnTheSharedScheduler() - before)
                    .as("watch timeouts still scheduled for informers nobody stops")
                    .isZero());
  }
}

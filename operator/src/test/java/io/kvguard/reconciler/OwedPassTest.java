package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A policy created again under a name while that name's deletion pass ran gets an event once the
 * deletion's scope ended. JOSDK drops that event if the deletion's thread has stalled and not yet
 * ended the scope: the event must come again until the policy has had a pass.
 */
class OwedPassTest {
  private static final ResourceID NAME = new ResourceID("glm", "inference");
  private static final Duration FIRST = Duration.ofMillis(20);

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final AtomicReference<ModelDeployment> cached = new AtomicReference<>();
  private final List<ModelDeployment> sent = new CopyOnWriteArrayList<>();

  private final OwedPass owed =
      new OwedPass(timer, name -> Optional.ofNullable(cached.get()), sent::add, FIRST, 5);

  @AfterEach
  void stop() {
    timer.shutdownNow();
  }

  private static ModelDeployment policy(String uid, boolean deleting) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setNamespace("inference");
    md.getMetadata().setName("glm");
    md.getMetadata().setUid(uid);
    if (deleting) {
      md.getMetadata().setDeletionTimestamp("2026-12-06T00:00:00Z");
    }
    return md;
  }

  @Test
  void aPolicyWhoseOwedEventWasLostIsGivenItAgainUntilItHasAPass() {
    cached.set(policy("new", false));
    owed.deletionPassEnded(NAME);

    // The first event and a repeat (JOSDK dropped the first: no pass came).
    await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() >= 2);
    owed.passStarted(cached.get(), false);
    int afterThePass = sent.size();
    // The repeats' waits (20, 40, 80, 160 ms) are long over.
    await().pollDelay(Duration.ofMillis(800)).atMost(Duration.ofSeconds(2)).until(() -> true);

    assertThat(sent.size()).isLessThanOrEqualTo(afterThePass + 1);
    assertThat(sent).allSatisfy(md -> assertThat(md.getMetadata().getUid()).isEqualTo("new"));
    assertThat(owed.names()).as("nothing kept once the events end").isEmpty();
  }

  @Test
  void theEventsStopAfterTheirNumberAndNoneGoesToANameTheCacheNoLongerHolds() {
    cached.set(policy("new", false));
    owed.deletionPassEnded(NAME);
    await().pollDelay(Duration.ofMillis(2_500)).atMost(Duration.ofSeconds(4)).until(() -> true);
    assertThat(sent).hasSize(5);

    sent.clear();
    cached.set(null);
    owed.deletionPassEnded(NAME);
    await().pollDelay(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(sent).isEmpty();
  }

  @Test
  void aPolicyBeingDeletedIsGivenItsEventsEvenAfterAPassOnlyAPassOfItReleasesTheFinalizer() {
    cached.set(policy("recreated", true));
    owed.deletionPassEnded(NAME);
    owed.passStarted(cached.get(), false);
    await().atMost(Duration.ofSeconds(10)).until(() -> sent.size() == 5);
    await().atMost(Duration.ofSeconds(2)).until(() -> owed.names().isEmpty());
  }

  /**
   * The deletion's pass was handed the policy created again under the name (the cache held it when
   * JOSDK read it) and ran an ordinary pass of it; then its thread stalled before JOSDK ended the
   * scope, and the first event went with the scope's state. That pass was not the policy's own:
   * JOSDK dropped its reschedule and the probes' answers with the name's state, so only the repeats
   * bring it a pass. Before, that pass counted, and the repeats were never sent.
   */
  @Test
  void aPolicyWhoseOnlyPassRanInTheDeletionsScopeIsStillOwedItsEvents() {
    cached.set(policy("new", false));
    owed.passStarted(cached.get(), true);
    owed.deletionPassEnded(NAME);

    await().atMost(Duration.ofSeconds(5)).until(() -> sent.size() >= 2);
    owed.passStarted(cached.get(), false);
    int afterItsOwnPass = sent.size();
    await().pollDelay(Duration.ofMillis(800)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(sent.size()).isLessThanOrEqualTo(afterItsOwnPass + 1);
    assertThat(owed.names()).isEmpty();
  }

  /** A pass of its own before a later deletion's pass of the name ended ran under that state. */
  @Test
  void aPassBeforeAnotherDeletionsPassEndedCountsForNothing() {
    cached.set(policy("new", false));
    owed.deletionPassEnded(NAME);
    owed.passStarted(cached.get(), false);
    owed.deletionPassEnded(NAME);
    await().pollDelay(Duration.ofMillis(2_500)).atMost(Duration.ofSeconds(4)).until(() -> true);
    assertThat(sent).as("the second deletion's five events").hasSizeGreaterThanOrEqualTo(5);
    assertThat(owed.names()).isEmpty();
  }
}

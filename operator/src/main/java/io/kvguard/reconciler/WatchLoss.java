package io.kvguard.reconciler;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Since when a namespace's pod watch has been down, from samples of its informer. A watch that is
 * refused for ever is reopened by fabric8 without a LIST and the informer never stops (fabric8
 * v7.5.2, docs/reliability.md), so the cache would keep every pod as it was: a container restart
 * would keep the verdict and the open gate of the container before it. Past {@link #BOUND} the
 * namespace's passes vouch for none of its pods ({@link ShutAssessments#unwatched}).
 *
 * <p>A sample that finds the watch up clears the loss: fabric8 reopens each watch every 5 to 10
 * minutes, a gap of milliseconds that samples seconds apart must not add up across.
 */
final class WatchLoss {
  /**
   * Longer than fabric8's longest wait between two tries to reopen a watch (32 s) and than an API
   * server's rolling restart drops watches for, short enough that a restarted container is not
   * served unseen for long.
   */
  static final Duration BOUND = Duration.ofSeconds(60);

  private Instant since;
  private boolean announced;
  private Instant passesAsked;

  /** Records what the informer says now. */
  synchronized void sample(boolean watching, Instant now) {
    if (watching) {
      since = null;
      announced = false;
      passesAsked = null;
    } else if (since == null) {
      since = now;
    }
  }

  /** Since when the watch has been down, once that is longer than {@code bound}. */
  synchronized Optional<Instant> lostLongerThan(Duration bound, Instant now) {
    return since != null && Duration.between(since, now).compareTo(bound) > 0
        ? Optional.of(since)
        : Optional.empty();
  }

  /** True the first time it is asked during one loss: the loss is logged once, not every pass. */
  synchronized boolean firstAnnouncement() {
    if (since == null || announced) {
      return false;
    }
    announced = true;
    return true;
  }

  /**
   * True when the sampler is to give each of the namespace's policies a pass: once the loss is
   * longer than {@link #BOUND}, and again each {@link #BOUND} while it lasts. Apart from {@link
   * #firstAnnouncement}, which any pass may spend first: a pass of one policy seeing the loss shuts
   * that policy's gates only, and the others' must not wait for their own next period. Again and
   * again, because each of those passes first lists the namespace anew ({@link PodCache}) and,
   * should that fail, fails itself, and JOSDK stops retrying a failing pass after five tries
   * (GenericRetry.DEFAULT at v5.2.3): without these passes the namespace would be listed again only
   * at its policies' next event.
   */
  synchronized boolean passesDue(Instant now) {
    if (since == null
        || Duration.between(since, now).compareTo(BOUND) <= 0
        || (passesAsked != null && Duration.between(passesAsked, now).compareTo(BOUND) < 0)) {
      return false;
    }
    passesAsked = now;
    return true;
  }
}

package io.kvguard.reconciler;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.verdict.GateReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * When a policy's first status is written: with its first verdicts, not before. A policy that never
 * had a status and whose pass found only pods awaiting the probes it just sent waits for them
 * (their answers bring the next pass) instead of writing a status that says only that: at start-up
 * over 100 policies those writes were a hundred requests in the first second of probing, in the way
 * of the probes and the gates (docs/benchmarks.md, "Start-up"). The wait is bounded ({@link
 * #WAIT}): past it, or as soon as anything else is to be said (a refused, failed or verified pod,
 * no pod, an invalid spec), the status is written as before.
 */
final class FirstStatus {
  /** The longest a new policy's status waits for its first verdicts. */
  static final Duration WAIT = Duration.ofSeconds(5);

  private final ConcurrentMap<ResourceID, Instant> waitingSince = new ConcurrentHashMap<>();

  /**
   * How long this pass may leave the status unwritten (empty: write it now).
   *
   * @param entries the pods the status would list
   * @param valid the spec can be applied
   */
  Optional<Duration> holdFor(
      ModelDeployment md, List<PodVerdictStatus> entries, boolean valid, Instant now) {
    ResourceID self = ResourceID.fromResource(md);
    boolean onlyAwaiting =
        md.getStatus() == null
            && valid
            && !entries.isEmpty()
            && entries.stream()
                .allMatch(entry -> GateReason.AwaitingProbe.name().equals(entry.reason));
    if (!onlyAwaiting) {
      waitingSince.remove(self);
      return Optional.empty();
    }
    Instant since = waitingSince.computeIfAbsent(self, id -> now);
    Duration left = WAIT.minus(Duration.between(since, now));
    if (left.isNegative() || left.isZero()) {
      waitingSince.remove(self);
      return Optional.empty();
    }
    return Optional.of(left);
  }

  void forget(ResourceID policy) {
    waitingSince.remove(policy);
  }

  Set<ResourceID> policies() {
    return Set.copyOf(waitingSince.keySet());
  }
}

package io.kvguard.gate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.PodResource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kvguard.verdict.GateDecision;
import java.time.Clock;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one pod's gate. Every write is fenced: it tests the pod's UID and the resourceVersion it
 * was planned on, so a writer whose read is older than the pod is refused. On such a conflict the
 * pod is read again: when only others' fields changed (the kubelet's), the write is planned anew on
 * the fresh pod; when the gate itself changed, a newer decision was written meanwhile (another
 * pass, or a second replica that briefly believed it led) and this one, made without seeing it, is
 * dropped: the pod's change triggers the pass that decides again. A pod that is gone, recreated
 * with a new UID, or terminating is left alone.
 */
public final class PodGate {
  private static final Logger LOG = LoggerFactory.getLogger(PodGate.class);
  private static final int MAX_ATTEMPTS = 5;
  private static final PatchContext JSON_PATCH = PatchContext.of(PatchType.JSON);

  private final KubernetesClient client;
  private final Clock clock;

  public PodGate(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * What a call wrote. {@code superseded}: a write was dropped because the pod's gate changed after
   * the read it was planned on; the caller should decide again from a fresh read.
   */
  public record Outcome(
      boolean conditionWritten, boolean labelWritten, boolean podGone, boolean superseded) {}

  /**
   * Writes the condition, then the label. {@code beforeWrite} runs before each patch is sent (never
   * when the pod already shows the decision), so whatever must be in place before kvguard touches a
   * pod can be. {@code written} hears of each accepted write with the pod it replaced, so a cache
   * can hold our own writes one by one: a watch event for the first write then finds it known.
   */
  public Outcome apply(
      Pod cached, GateDecision decision, Runnable beforeWrite, BiConsumer<Pod, Pod> written) {
    return apply(cached, decision, null, beforeWrite, written);
  }

  /**
   * Hears of an accepted write: the pod written, the version it replaced ({@code base}), and the
   * version the caller read the pod at ({@code read}): older than {@code base} when a conflict made
   * the write read the pod again. A cache lagging the API server may still show {@code read}.
   */
  @FunctionalInterface
  public interface Accepted {
    void accepted(Pod written, Pod base, Pod read);
  }

  /** As below, telling {@code written} of each write and the version it replaced only. */
  public Outcome apply(
      Pod cached,
      GateDecision decision,
      RecordUpdate update,
      Runnable beforeWrite,
      BiConsumer<Pod, Pod> written) {
    return apply(
        cached, decision, update, beforeWrite, (pod, base, read) -> written.accept(pod, base));
  }

  /**
   * As above, and brings the policy's verdict record on the pod to {@code update} in the
   * condition's request. {@code decision} null leaves condition and label as they are and writes
   * only the record (a policy letting go of a pod another policy still gates).
   */
  public Outcome apply(
      Pod cached,
      GateDecision decision,
      RecordUpdate update,
      Runnable beforeWrite,
      Accepted written) {
    String policy = update == null ? null : update.modelDeployment();
    // Condition first: for a closing gate both writes close it; for an opening gate the label
    // follows the condition so a label-routed pod is never ahead of its condition. Handing a pod
    // back is about no container (its label goes, whatever runs); every other opening decision is
    // about the containers it was judged on.
    boolean judgedOpening =
        decision != null
            && decision.open()
            && decision.reason() != io.kvguard.verdict.GateReason.PolicyRemoved;
    Attempt condition =
        write(
            cached,
            cached,
            policy,
            p -> GatePatchPlanner.conditionPatch(p, decision, update, clock.instant()),
            beforeWrite,
            true,
            judgedOpening);
    if (condition.stopped()) {
      return new Outcome(false, false, condition.podGone(), condition.superseded());
    }
    Pod pod = cached;
    if (condition.written() != null) {
      written.accepted(condition.written(), condition.base(), cached);
      pod = condition.written();
    }
    if (decision == null) {
      // The pod stays another policy's; the context-length label this one published leaves with it,
      // or it would
      // outlive the policy with nobody to correct it.
      Attempt label =
          write(
              cached,
              pod,
              policy,
              p -> GatePatchPlanner.contextLengthRemoval(p, update),
              beforeWrite,
              false,
              false);
      if (label.written() != null) {
        written.accepted(label.written(), label.base(), cached);
      }
      return new Outcome(
          condition.written() != null,
          label.written() != null,
          label.podGone(),
          label.superseded());
    }
    Attempt label =
        write(
            cached,
            pod,
            policy,
            p -> GatePatchPlanner.labelPatch(p, decision, update),
            beforeWrite,
            false,
            judgedOpening);
    if (label.written() != null) {
      written.accepted(label.written(), label.base(), cached);
    }
    return new Outcome(
        condition.written() != null, label.written() != null, label.podGone(), label.superseded());
  }

  /**
   * One write's end: the pod it wrote (null when nothing needed writing), or stopped because the
   * pod is gone (or recreated under a new UID) or, for an opening decision, no longer runs the
   * containers that were judged.
   */
  private record Attempt(
      Pod written, Pod base, boolean stopped, boolean podGone, boolean superseded) {
    static final Attempt NOTHING_TO_WRITE = new Attempt(null, null, false, false, false);
    static final Attempt GONE = new Attempt(null, null, true, true, false);
    static final Attempt STALE = new Attempt(null, null, true, false, false);
    static final Attempt SUPERSEDED = new Attempt(null, null, true, false, true);

    /** {@code base}: the version the write was planned on (a re-read one after a conflict). */
    static Attempt wrote(Pod pod, Pod base) {
      return new Attempt(pod, base, false, false, false);
    }
  }

  /**
   * The pod as the API server holds it now; empty when it is gone or was recreated under a new UID.
   */
  public Optional<Pod> reread(Pod pod) {
    Pod fresh =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    return fresh != null && Objects.equals(fresh.getMetadata().getUid(), pod.getMetadata().getUid())
        ? Optional.of(fresh)
        : Optional.empty();
  }

  /**
   * A pod being deleted keeps the gate it has: its containers cannot restart, and writes to it are
   * wasted.
   */
  public static boolean terminating(Pod pod) {
    return pod.getMetadata().getDeletionTimestamp() != null;
  }

  /**
   * What a patch is addressed to. fabric8 GETs a name-only resource before every string patch to
   * learn what it patches, which would double the requests per gate write; given an item it clones
   * it instead, so the item is only the address. The patch carries its own preconditions (uid and
   * resourceVersion tests).
   */
  public static Pod address(Pod pod) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .endMetadata()
        .build();
  }

  /**
   * Plans and writes one patch, re-reading on conflict. {@code judged} is the pod the decision was
   * made on: an opening decision is not written onto containers it was not made for.
   */
  private Attempt write(
      Pod judged,
      Pod pod,
      String policy,
      Function<Pod, Optional<String>> planner,
      Runnable beforeWrite,
      boolean statusSubresource,
      boolean opening) {
    Pod current = pod;
    for (int attempt = 1; ; attempt++) {
      if (terminating(current)) {
        return Attempt.GONE;
      }
      if (opening && !ProcessIdentity.sameProcesses(judged, current)) {
        // Opening now would open a container nobody judged. The pod's change triggers the pass that
        // judges it.
        return Attempt.STALE;
      }
      Optional<String> patch = planner.apply(current);
      if (patch.isEmpty()) {
        return Attempt.NOTHING_TO_WRITE;
      }
      beforeWrite.run();
      PodResource resource =
          client
              .pods()
              .inNamespace(current.getMetadata().getNamespace())
              .resource(address(current));
      try {
        return Attempt.wrote(
            statusSubresource
                ? resource.subresource("status").patch(JSON_PATCH, patch.get())
                : resource.patch(JSON_PATCH, patch.get()),
            current);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return Attempt.GONE;
        }
        boolean conflict = e.getCode() == 409 || e.getCode() == 422;
        if (!conflict || attempt >= MAX_ATTEMPTS) {
          throw e;
        }
        LOG.debug(
            "gate write conflict pod={}/{} attempt={}",
            current.getMetadata().getNamespace(),
            current.getMetadata().getName(),
            attempt);
        Pod fresh =
            client
                .pods()
                .inNamespace(current.getMetadata().getNamespace())
                .withName(current.getMetadata().getName())
                .get();
        if (fresh == null
            || !Objects.equals(fresh.getMetadata().getUid(), pod.getMetadata().getUid())) {
          return Attempt.GONE;
        }
        if (!GatePatchPlanner.gateOf(fresh, policy)
            .equals(GatePatchPlanner.gateOf(current, policy))) {
          // Someone wrote the gate (or this policy's record) after the read this decision was made
          // on: never overwrite what we did not see. Other policies' records are merged by planning
          // again.
          LOG.info(
              "gate write dropped pod={}/{}: the gate changed since it was read (now {})",
              current.getMetadata().getNamespace(),
              current.getMetadata().getName(),
              GatePatchPlanner.gateOf(fresh, null));
          return Attempt.SUPERSEDED;
        }
        current = fresh;
      }
    }
  }
}

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
 * Writes one pod's gate. A conflict (the pod changed since it was read) re-reads the pod and re-plans, so a
 * write is never based on a stale view; a pod that is gone, or was recreated with a new UID, is left alone.
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

  /** What a call wrote. */
  public record Outcome(boolean conditionWritten, boolean labelWritten, boolean podGone) {}

  /**
   * Writes the condition, then the label. {@code beforeWrite} runs before each patch is sent (never when the pod
   * already shows the decision), so whatever must be in place before kvguard touches a pod can be. {@code
   * written} hears of each accepted write with the pod it replaced, so a cache can hold our own writes one by
   * one: a watch event for the first write then finds it known.
   */
  public Outcome apply(Pod cached, GateDecision decision, Runnable beforeWrite, BiConsumer<Pod, Pod> written) {
    Pod pod = cached;
    boolean conditionWritten = false;
    // Condition first: for a closing gate both writes close it; for an opening gate the label follows the
    // condition so a label-routed pod is never ahead of its condition.
    Optional<Pod> afterCondition = write(pod, p -> GatePatchPlanner.conditionPatch(p, decision, clock.instant()),
        beforeWrite, true);
    if (afterCondition == null) {
      return new Outcome(false, false, true);
    }
    if (afterCondition.isPresent()) {
      written.accept(afterCondition.get(), pod);
      pod = afterCondition.get();
      conditionWritten = true;
    }
    Optional<Pod> afterLabel = write(pod, p -> GatePatchPlanner.labelPatch(p, decision), beforeWrite, false);
    if (afterLabel == null) {
      return new Outcome(conditionWritten, false, true);
    }
    if (afterLabel.isPresent()) {
      written.accept(afterLabel.get(), pod);
      pod = afterLabel.get();
    }
    return new Outcome(conditionWritten, afterLabel.isPresent(), false);
  }

  /**
   * What a patch is addressed to. fabric8 GETs a name-only resource before every string patch to learn what it
   * patches, which would double the requests per gate write; given an item it clones it instead, so the item is
   * only the address. The patch carries its own preconditions (uid and resourceVersion tests).
   */
  public static Pod address(Pod pod) {
    return new PodBuilder().withNewMetadata().withNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName()).endMetadata().build();
  }

  /**
   * Plans and writes one patch, re-reading on conflict. Returns the written pod, empty when nothing needed
   * writing, or null when the pod no longer exists under its UID.
   */
  private Optional<Pod> write(Pod pod, Function<Pod, Optional<String>> planner, Runnable beforeWrite,
      boolean statusSubresource) {
    Pod current = pod;
    for (int attempt = 1; ; attempt++) {
      Optional<String> patch = planner.apply(current);
      if (patch.isEmpty()) {
        return Optional.empty();
      }
      beforeWrite.run();
      PodResource resource = client.pods().inNamespace(current.getMetadata().getNamespace()).resource(address(current));
      try {
        Pod written = statusSubresource
            ? resource.subresource("status").patch(JSON_PATCH, patch.get())
            : resource.patch(JSON_PATCH, patch.get());
        return Optional.of(written);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return null;
        }
        boolean conflict = e.getCode() == 409 || e.getCode() == 422;
        if (!conflict || attempt >= MAX_ATTEMPTS) {
          throw e;
        }
        LOG.debug("gate write conflict pod={}/{} attempt={}", current.getMetadata().getNamespace(),
            current.getMetadata().getName(), attempt);
        Pod fresh = client.pods().inNamespace(current.getMetadata().getNamespace())
            .withName(current.getMetadata().getName()).get();
        if (fresh == null || !Objects.equals(fresh.getMetadata().getUid(), pod.getMetadata().getUid())) {
          return null;
        }
        current = fresh;
      }
    }
  }
}

package io.kvguard.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * kvguard's finalizer on a ModelDeployment, which promises that deleting the policy hands its pods back. It is
 * added just before the policy's first write to a pod, not before its first pass: a new policy's first pass
 * only starts probes, so the finalizer's round trip overlaps them instead of holding every probe back (and a
 * policy deleted before it wrote anything needs nobody to wait for it). The name is the one JOSDK gave it when it
 * added the finalizer itself, so policies written by earlier versions keep theirs.
 */
final class PolicyFinalizer {
  static final String NAME = "modeldeployments.kvguard.io/finalizer";

  /** Policies (by uid) this process gave the finalizer, while the cache may still show them without it. */
  private final Set<String> added = ConcurrentHashMap.newKeySet();

  /** Adds the finalizer unless the policy has it or is being deleted (then its pods are being handed back). */
  void ensure(Context<ModelDeployment> context, ModelDeployment md) {
    String uid = md.getMetadata().getUid();
    if (md.hasFinalizer(NAME)) {
      // The cache has caught up; should someone remove the finalizer later, the next write adds it again.
      added.remove(uid);
      return;
    }
    if (md.isMarkedForDeletion() || added.contains(uid)) {
      return;
    }
    // A JSON patch re-read and retried on conflict (JOSDK's helper); never server-side apply.
    ModelDeployment updated = PrimaryUpdateAndCacheUtils.addFinalizer(context.getClient(), md, NAME);
    added.add(uid);
    // The next pass reads the policy from the cache, this one goes on with md: both must see the new version, or
    // the status patch that ends the pass is refused as stale (409) and waits for the watch to retry.
    context.eventSourceRetriever().getControllerEventSource()
        .handleRecentResourceUpdate(ResourceID.fromResource(md), updated, md);
    md.getMetadata().setFinalizers(updated.getMetadata().getFinalizers());
    md.getMetadata().setResourceVersion(updated.getMetadata().getResourceVersion());
  }

  /** Lets the API server delete the policy once its pods are handed back. */
  void release(KubernetesClient client, ModelDeployment md) {
    added.remove(md.getMetadata().getUid());
    try {
      PrimaryUpdateAndCacheUtils.removeFinalizer(client, md, NAME);
    } catch (KubernetesClientException e) {
      // A pass that started from a cache still showing the finalizer, after an earlier pass removed it: gone is done.
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  void forget(ModelDeployment md) {
    added.remove(md.getMetadata().getUid());
  }
}

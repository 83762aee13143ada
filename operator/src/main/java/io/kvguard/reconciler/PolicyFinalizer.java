package io.kvguard.reconciler;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;

/**
 * kvguard's finalizer on a ModelDeployment, which promises that deleting the policy hands its pods
 * back. It is added just before the policy's first write to a pod, not before its first pass: a new
 * policy's first pass only starts probes, so the finalizer's round trip overlaps them instead of
 * holding every probe back (and a policy deleted before it wrote anything needs nobody to wait for
 * it). The name is the one JOSDK gave it when it added the finalizer itself, so policies written by
 * earlier versions keep theirs.
 */
final class PolicyFinalizer {
  static final String NAME = "modeldeployments.kvguard.io/finalizer";

  private PolicyFinalizer() {}

  /**
   * Adds the finalizer unless the policy has it or is being deleted (then its pods are being handed
   * back).
   */
  static void ensure(Context<ModelDeployment> context, ModelDeployment md) {
    // Should someone remove the finalizer by hand, the policy's next pod write puts it back.
    if (md.hasFinalizer(NAME) || md.isMarkedForDeletion()) {
      return;
    }
    // A JSON patch re-read and retried on conflict (JOSDK's helper); never server-side apply.
    ModelDeployment updated =
        PrimaryUpdateAndCacheUtils.addFinalizer(context.getClient(), md, NAME);
    // The next pass reads the policy from the cache, this one goes on with md: both must see the
    // new version, or the next pass adds it again and the status patch that ends this one is
    // refused as stale (409).
    context
        .eventSourceRetriever()
        .getControllerEventSource()
        .handleRecentResourceUpdate(ResourceID.fromResource(md), updated, md);
    md.getMetadata().setFinalizers(updated.getMetadata().getFinalizers());
    md.getMetadata().setResourceVersion(updated.getMetadata().getResourceVersion());
  }

  /** Lets the API server delete the policy once its pods are handed back. */
  static void release(KubernetesClient client, ModelDeployment md) {
    try {
      PrimaryUpdateAndCacheUtils.removeFinalizer(client, md, NAME);
    } catch (KubernetesClientException e) {
      // A pass that started from a cache still showing the finalizer, after an earlier pass removed
      // it: gone is done.
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }
}

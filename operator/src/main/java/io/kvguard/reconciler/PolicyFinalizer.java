package io.kvguard.reconciler;

import com.fasterxml.jackson.databind.node.TextNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import java.util.ArrayList;
import java.util.List;

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
    ModelDeployment updated = add(context.getClient(), md);
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

  /** Attempts at adding the finalizer, as JOSDK's own helper makes (v5.2.3, DEFAULT_MAX_RETRY). */
  static final int MAX_ATTEMPTS = 10;

  /**
   * The finalizer added by one JSON patch, re-read and tried again on a conflict (409) or a patch
   * the policy no longer fits (422), as JOSDK's {@code PrimaryUpdateAndCacheUtils.addFinalizer}
   * does (v5.2.3, {@code conflictRetryingPatch}); never server-side apply. Not that helper itself:
   * it goes through fabric8's {@code edit}, which copies the policy through JSON and diffs two JSON
   * trees to find the one line that changed, a twelfth of a start-up pass's CPU at 100 policies
   * (issue 28 §5). The patch carries the version it was planned on, as fabric8's diff does (v7.5.2,
   * {@code OperationSupport.handlePatch}), so the API server refuses it (409) if the policy changed
   * meanwhile instead of dropping another writer's finalizer.
   *
   * <p>A re-read is the name's policy now, which need not be the one the pass is about. Deleted and
   * created again under the name (another UID), it is another policy: adding the finalizer there
   * and answering with it would hand its version to this pass, whose status write (guarded by that
   * version alone) would then land this policy's conclusions on the new one. Being deleted without
   * kvguard's finalizer, it can no longer take one (the API server forbids new finalizers once
   * deletionTimestamp is set, 422), and a pod written now would depend on the operator seeing the
   * deletion to be handed back, the very promise the finalizer keeps across a restart. Both end the
   * attempt with an exception, so the write it was for is not made (JOSDK's helper failed it too,
   * after ten refused patches); the pass that follows the deletion or the new policy's own pass
   * takes over.
   */
  static ModelDeployment add(KubernetesClient client, ModelDeployment md) {
    if (md.hasFinalizer(NAME) || md.isMarkedForDeletion()) {
      return md;
    }
    String uid = md.getMetadata().getUid();
    var policies = client.resources(ModelDeployment.class);
    var named =
        policies.inNamespace(md.getMetadata().getNamespace()).withName(md.getMetadata().getName());
    // Addressed, not named: by name alone fabric8 GETs the policy before every patch.
    var addressed = policies.resource(PolicyAddress.of(md));
    ModelDeployment current = md;
    for (int attempt = 1; ; attempt++) {
      try {
        return addressed.patch(PatchContext.of(PatchType.JSON), addPatch(client, current));
      } catch (KubernetesClientException e) {
        if ((e.getCode() != 409 && e.getCode() != 422) || attempt >= MAX_ATTEMPTS) {
          throw e;
        }
        ModelDeployment again = named.get();
        if (again == null) {
          throw e;
        }
        if (uid != null && !uid.equals(again.getMetadata().getUid())) {
          throw new KubernetesClientException(
              describe(md) + " was deleted and created again: kvguard's finalizer is not added",
              409,
              e.getStatus());
        }
        if (again.hasFinalizer(NAME)) {
          return again;
        }
        if (again.isMarkedForDeletion()) {
          throw new KubernetesClientException(
              describe(md) + " is being deleted: kvguard's finalizer can no longer be added",
              409,
              e.getStatus());
        }
        current = again;
      }
    }
  }

  private static String describe(ModelDeployment md) {
    return "ModelDeployment " + md.getMetadata().getNamespace() + "/" + md.getMetadata().getName();
  }

  /**
   * The copy's resourceVersion, then its finalizers with kvguard's appended. A copy built in
   * process may have no list at all (fabric8's ObjectMeta keeps a null it is given); the API server
   * never sends one, and "add" sets the member whether it exists or not.
   */
  static String addPatch(KubernetesClient client, ModelDeployment md) {
    List<String> finalizers =
        md.getMetadata().getFinalizers() == null
            ? new ArrayList<>()
            : new ArrayList<>(md.getMetadata().getFinalizers());
    finalizers.add(NAME);
    String version = md.getMetadata().getResourceVersion();
    return "["
        + (version == null
            ? ""
            : "{\"op\":\"add\",\"path\":\"/metadata/resourceVersion\",\"value\":"
                + TextNode.valueOf(version)
                + "},")
        + "{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":"
        + client.getKubernetesSerialization().asJson(finalizers)
        + "}]";
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

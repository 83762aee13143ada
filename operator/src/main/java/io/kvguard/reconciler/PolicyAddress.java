package io.kvguard.reconciler;

import io.kvguard.customresource.ModelDeployment;

/**
 * Where a patch to a ModelDeployment goes, and nothing else. fabric8 (v7.5.2, {@code
 * HasMetadataOperation.patch(PatchContext, String)} through {@code
 * BaseOperation.getItemOrRequireFromServer}) GETs a resource addressed by name alone before
 * patching it, and copies a resource it is given whole through JSON; for a patch given as text it
 * uses only the copy's namespace and name ({@code OperationSupport.handlePatch}). A policy's status
 * holds a verdict per pod, so each copy was a large part of a status write, and the GET a second
 * round trip in front of every finalizer (issue 28 §5).
 */
final class PolicyAddress {
  private PolicyAddress() {}

  static ModelDeployment of(ModelDeployment md) {
    ModelDeployment address = new ModelDeployment();
    address.getMetadata().setNamespace(md.getMetadata().getNamespace());
    address.getMetadata().setName(md.getMetadata().getName());
    return address;
  }
}

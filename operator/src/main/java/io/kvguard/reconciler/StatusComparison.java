package io.kvguard.reconciler;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.customresource.ModelDeploymentStatus;

/**
 * Status equality by JSON value, so a status is written only when a field a user can see changed.
 */
final class StatusComparison {
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private StatusComparison() {}

  static boolean same(ModelDeploymentStatus before, ModelDeploymentStatus after) {
    if (before == null || after == null) {
      return before == after;
    }
    return SERIALIZATION
        .convertValue(before, com.fasterxml.jackson.databind.JsonNode.class)
        .equals(SERIALIZATION.convertValue(after, com.fasterxml.jackson.databind.JsonNode.class));
  }
}

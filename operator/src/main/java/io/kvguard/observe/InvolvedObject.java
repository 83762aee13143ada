package io.kvguard.observe;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;

/**
 * What an Event is about: the fields of its involvedObject that never change over the object's
 * life.
 */
public record InvolvedObject(
    String apiVersion, String kind, String namespace, String name, String uid) {

  public static InvolvedObject of(HasMetadata object) {
    return new InvolvedObject(
        object.getApiVersion(),
        object.getKind(),
        object.getMetadata().getNamespace(),
        object.getMetadata().getName(),
        object.getMetadata().getUid());
  }

  ObjectReference reference() {
    return new ObjectReferenceBuilder()
        .withApiVersion(apiVersion)
        .withKind(kind)
        .withNamespace(namespace)
        .withName(name)
        .withUid(uid)
        .build();
  }
}

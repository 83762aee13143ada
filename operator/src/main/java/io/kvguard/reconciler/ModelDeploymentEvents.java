package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.customresource.ModelDeployment;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Kubernetes events on a ModelDeployment, emitted on verdict transitions only. */
final class ModelDeploymentEvents {
  private static final Logger LOG = LoggerFactory.getLogger(ModelDeploymentEvents.class);
  static final String COMPONENT = "kvguard";

  private final KubernetesClient client;
  private final Clock clock;
  private final String instance;

  ModelDeploymentEvents(KubernetesClient client, Clock clock, String instance) {
    this.client = client;
    this.clock = clock;
    this.instance = instance;
  }

  void warning(ModelDeployment md, String reason, String message) {
    emit(md, "Warning", reason, message);
  }

  void normal(ModelDeployment md, String reason, String message) {
    emit(md, "Normal", reason, message);
  }

  private void emit(ModelDeployment md, String type, String reason, String message) {
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    Event event = new EventBuilder()
        .withNewMetadata()
        .withName(md.getMetadata().getName() + "." + UUID.randomUUID().toString().replace("-", "").substring(0, 16))
        .withNamespace(md.getMetadata().getNamespace())
        .endMetadata()
        .withInvolvedObject(new ObjectReferenceBuilder()
            .withApiVersion(md.getApiVersion())
            .withKind(md.getKind())
            .withName(md.getMetadata().getName())
            .withNamespace(md.getMetadata().getNamespace())
            .withUid(md.getMetadata().getUid())
            .withResourceVersion(md.getMetadata().getResourceVersion())
            .build())
        .withType(type)
        .withReason(reason)
        .withMessage(message.length() > 1024 ? message.substring(0, 1021) + "..." : message)
        .withCount(1)
        .withFirstTimestamp(now)
        .withLastTimestamp(now)
        .withNewSource().withComponent(COMPONENT).endSource()
        .withReportingComponent("kvguard.io/operator")
        .withReportingInstance(instance)
        .build();
    try {
      client.v1().events().inNamespace(md.getMetadata().getNamespace()).resource(event).create();
    } catch (KubernetesClientException e) {
      // An event is a courtesy; the verdict is already in status and on the pod.
      LOG.warn("event not recorded modeldeployment={}/{} reason={} code={}", md.getMetadata().getNamespace(),
          md.getMetadata().getName(), reason, e.getCode());
    }
  }
}

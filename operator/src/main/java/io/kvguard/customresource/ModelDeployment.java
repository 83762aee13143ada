package io.kvguard.customresource;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;

/** A served model, its advertised context window, and the pod roles whose KV pools must hold it. */
@Group(ModelDeployment.GROUP)
@Version(ModelDeployment.VERSION)
@ShortNames("mdep")
@AdditionalPrinterColumn(
    name = "Model",
    jsonPath = ".spec.model",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Window",
    jsonPath = ".spec.contextWindow",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Verified",
    jsonPath = ".status.verified",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "Ready",
    jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
    type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(
    name = "LabelOnly",
    jsonPath = ".status.labelOnlyPods",
    type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
    name = "Age",
    jsonPath = ".metadata.creationTimestamp",
    type = AdditionalPrinterColumn.Type.DATE)
public class ModelDeployment extends CustomResource<ModelDeploymentSpec, ModelDeploymentStatus>
    implements Namespaced {
  public static final String GROUP = "kvguard.io";
  public static final String VERSION = "v1alpha1";

  // Spec and status are read tolerantly and written back as read (issue 29): a stored object whose
  // spec or status kvguard's classes cannot hold (a number out of range, a string for a number) is
  // one object kvguard cannot apply, never an informer failure that stops the operator.
  @Override
  @JsonSerialize(using = AsReadSerializer.Spec.class)
  public ModelDeploymentSpec getSpec() {
    return super.getSpec();
  }

  @Override
  @JsonDeserialize(using = TolerantPartDeserializer.Spec.class)
  public void setSpec(ModelDeploymentSpec spec) {
    super.setSpec(spec);
  }

  @Override
  @JsonSerialize(using = AsReadSerializer.Status.class)
  public ModelDeploymentStatus getStatus() {
    return super.getStatus();
  }

  @Override
  @JsonDeserialize(using = TolerantPartDeserializer.Status.class)
  public void setStatus(ModelDeploymentStatus status) {
    super.setStatus(status);
  }

  // No initStatus(): a fresh resource must have no status, so the first status patch adds /status
  // whole.
}

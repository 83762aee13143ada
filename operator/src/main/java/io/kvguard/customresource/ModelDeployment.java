package io.kvguard.customresource;

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

  // No initStatus(): a fresh resource must have no status, so the first status patch adds /status
  // whole.
}

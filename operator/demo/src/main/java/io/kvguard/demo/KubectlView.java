package io.kvguard.demo;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Renders a snapshot as the tables a user would get from kubectl for the same objects. */
final class KubectlView {
  private static final String INDENT = "  ";

  private final PrinterColumns columns;
  private final KubernetesSerialization serialization;

  KubectlView(PrinterColumns columns, KubernetesSerialization serialization) {
    this.columns = columns;
    this.serialization = serialization;
  }

  String modelDeployments(ClusterSnapshot snapshot, String namespace) {
    TextTable table = new TextTable(columns.headers().toArray(String[]::new));
    for (ModelDeployment md : snapshot.modelDeployments()) {
      JsonNode tree = serialization.convertValue(md, JsonNode.class);
      table.row(columns.row(tree, snapshot.at()).toArray(String[]::new));
    }
    return "$ kubectl get mdep -n " + namespace + System.lineSeparator() + table.render(INDENT);
  }

  String pods(ClusterSnapshot snapshot, String namespace) {
    TextTable table =
        new TextTable("NAME", "RESTARTS", "POOL-VERIFIED", "REASON", "VERIFIED", "MESSAGE");
    for (Pod pod : snapshot.pods()) {
      Optional<PodCondition> gate = ClusterSnapshot.gate(pod);
      table.row(
          pod.getMetadata().getName(),
          Integer.toString(ClusterSnapshot.engineRestarts(pod)),
          gate.map(PodCondition::getStatus).orElse("<none>"),
          gate.map(PodCondition::getReason).orElse(""),
          ClusterSnapshot.labelled(pod) ? "true" : "",
          gate.map(PodCondition::getMessage).orElse(""));
    }
    return "$ kubectl get pods -n "
        + namespace
        + " -L "
        + GateNames.VERIFIED_LABEL
        + "    # plus each pod's condition "
        + GateNames.CONDITION_TYPE
        + System.lineSeparator()
        + table.render(INDENT);
  }

  String describe(
      ClusterSnapshot snapshot, String namespace, String name, Comparator<Event> eventOrder) {
    StringBuilder text =
        new StringBuilder(
            "$ kubectl describe mdep "
                + name
                + " -n "
                + namespace
                + "    # Conditions and Events"
                + System.lineSeparator());
    TextTable conditions = new TextTable("TYPE", "STATUS", "REASON", "MESSAGE");
    snapshot
        .modelDeployment(name)
        .filter(md -> md.getStatus() != null && md.getStatus().conditions != null)
        .ifPresent(
            md -> {
              for (Condition c : md.getStatus().conditions) {
                conditions.row(c.getType(), c.getStatus(), c.getReason(), c.getMessage());
              }
            });
    text.append(conditions.render(INDENT));
    List<Event> events =
        snapshot.events().stream()
            .filter(
                e -> e.getInvolvedObject() != null && name.equals(e.getInvolvedObject().getName()))
            .sorted(eventOrder)
            .toList();
    TextTable table = new TextTable("TYPE", "REASON", "MESSAGE");
    events.forEach(e -> table.row(e.getType(), e.getReason(), e.getMessage()));
    text.append(System.lineSeparator()).append(table.render(INDENT));
    return text.toString();
  }
}

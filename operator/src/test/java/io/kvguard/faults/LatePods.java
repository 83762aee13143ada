package io.kvguard.faults;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.FakeEngine;
import java.util.HashMap;
import java.util.Map;

/**
 * Adds a pod while the operator runs. SimulatedPods creates the pod, then writes its status; a
 * policy that already selects it may write the gate in between and make that second write conflict.
 * So the pod is born unselected, made Running, and only then given the labels that select it, as a
 * rollout's pod would be.
 */
final class LatePods {
  private static final String UNSELECTED = "kvguard-test/unselected";

  private LatePods() {}

  static Pod add(OperatorHarness h, String name, Map<String, String> labels, FakeEngine engine) {
    h.pods.createRunning(
        OperatorHarness.NAMESPACE, name, Map.of(UNSELECTED, "true"), engine.port(), true);
    return h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(name)
        .edit(
            pod -> {
              Map<String, String> selected = new HashMap<>(labels);
              pod.getMetadata().setLabels(selected);
              return pod;
            });
  }
}

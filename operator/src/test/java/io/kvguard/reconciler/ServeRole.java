package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.testing.OperatorHarness;
import java.util.List;
import java.util.Map;

/**
 * Policy {@code glm}'s serve role in the harness's namespace, and SGLang engine pods it selects, as
 * the pod-cache tests make them.
 */
final class ServeRole {
  static final Map<String, String> LABELS = Map.of("app", "glm", "role", "serve");

  private ServeRole() {}

  static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(OperatorHarness.NAMESPACE)
        .withLabels(LABELS)
        .endMetadata()
        .withNewSpec()
        .addNewContainer()
        .withName("engine")
        .withImage("lmsysorg/sglang")
        .endContainer()
        .endSpec()
        .build();
  }

  static ModelDeployment policy() {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName("glm");
    md.getMetadata().setNamespace(OperatorHarness.NAMESPACE);
    md.getMetadata().setUid("uid-glm");
    md.getMetadata().setGeneration(1L);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(OperatorHarness.role("serve", Engine.SGLANG, LABELS)));
    md.setSpec(spec);
    return md;
  }
}

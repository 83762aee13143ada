package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RoleSpec;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Which specs gate nothing open, and the message the operator puts on the pods it shuts for them
 * (ProbeFailed) and {@code check --model-deployment} prints.
 */
class SpecProblemsTest {

  private static RoleSpec role(String name, Engine engine) {
    RoleSpec role = new RoleSpec();
    role.setName(name);
    role.setEngine(engine);
    role.setPort(new IntOrString("http"));
    role.setSelector(
        new LabelSelectorBuilder().withMatchLabels(Map.of("app", "glm", "role", name)).build());
    return role;
  }

  private static ModelDeploymentSpec valid() {
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(1_048_576L);
    spec.setRoles(List.of(role("prefill", Engine.SGLANG), role("decode", Engine.SGLANG)));
    return spec;
  }

  private static String problemAfter(Consumer<ModelDeploymentSpec> change) {
    ModelDeploymentSpec spec = valid();
    change.accept(spec);
    return SpecProblems.of(spec).orElse("(none)");
  }

  private static String roleProblemAfter(Consumer<RoleSpec> change) {
    return problemAfter(spec -> change.accept(spec.getRoles().get(1)));
  }

  @Test
  void aValidSpecHasNoProblem() {
    assertThat(SpecProblems.of(valid())).isEmpty();
    assertThat(RolePolicies.problem(valid())).isEmpty();
  }

  @Test
  void specWideProblemsNameTheField() {
    assertThat(SpecProblems.of(null)).contains("spec is missing");
    assertThat(problemAfter(spec -> spec.setModel(" "))).isEqualTo("spec.model is required");
    assertThat(problemAfter(spec -> spec.setContextWindow(0L)))
        .isEqualTo("spec.contextWindow must be >= 1");
    assertThat(problemAfter(spec -> spec.setContextWindow(null)))
        .isEqualTo("spec.contextWindow must be >= 1");
    assertThat(problemAfter(spec -> spec.setMinPoolRatio(0.5)))
        .isEqualTo("spec.minPoolRatio must be a finite number >= 1.0");
    assertThat(problemAfter(spec -> spec.setMinPoolRatio(Double.NaN)))
        .isEqualTo("spec.minPoolRatio must be a finite number >= 1.0");
    assertThat(problemAfter(spec -> spec.setMinPoolRatio(Double.POSITIVE_INFINITY)))
        .isEqualTo("spec.minPoolRatio must be a finite number >= 1.0");
    assertThat(
            problemAfter(
                spec -> {
                  ProbeSpec probe = new ProbeSpec();
                  probe.setTimeoutSeconds(0);
                  spec.setProbe(probe);
                }))
        .isEqualTo("spec.probe.periodSeconds and timeoutSeconds must be >= 1");
    assertThat(problemAfter(spec -> spec.setRoles(List.of())))
        .isEqualTo("spec.roles must list at least one role");
  }

  @Test
  void roleProblemsNameTheRole() {
    assertThat(roleProblemAfter(role -> role.setEngine(null)))
        .isEqualTo("role decode: engine is required");
    assertThat(roleProblemAfter(role -> role.setPort(null)))
        .isEqualTo("role decode: port is required");
    assertThat(roleProblemAfter(role -> role.setPort(new IntOrString(0))))
        .isEqualTo("role decode: port 0 is out of range 1-65535");
    assertThat(roleProblemAfter(role -> role.setMetricsPort(new IntOrString(70000))))
        .isEqualTo("role decode: metricsPort 70000 is out of range 1-65535");
    assertThat(roleProblemAfter(role -> role.setMinReadyPods(-1)))
        .isEqualTo("role decode: minReadyPods must be >= 0");
    assertThat(roleProblemAfter(role -> role.setSelector(new LabelSelector())))
        .isEqualTo("role decode: selector is empty and would select every pod in the namespace");
    assertThat(
            roleProblemAfter(
                role ->
                    role.setSelector(
                        new LabelSelectorBuilder()
                            .withMatchExpressions(
                                new LabelSelectorRequirement("role", "Matches", List.of("decode")))
                            .build())))
        .isEqualTo("role decode: matchExpression role has unknown operator Matches");
  }

  @Test
  void blockCountIsPoolIsOnlyForEnginesThatExportABlockCount() {
    assertThat(roleProblemAfter(role -> role.setBlockCountIsPool(true)))
        .isEqualTo("role decode: blockCountIsPool applies to engines trtllm and vllm only");
    assertThat(
            roleProblemAfter(
                role -> {
                  role.setEngine(Engine.VLLM);
                  role.setBlockCountIsPool(true);
                }))
        .isEqualTo("(none)");
    assertThat(
            roleProblemAfter(
                role -> {
                  role.setEngine(Engine.TRTLLM);
                  role.setBlockCountIsPool(false);
                }))
        .isEqualTo("(none)");
  }

  @Test
  void roleNamesMustBePresentAndDistinct() {
    assertThat(roleProblemAfter(role -> role.setName(""))).isEqualTo("every role needs a name");
    assertThat(roleProblemAfter(role -> role.setName("prefill")))
        .isEqualTo("role name prefill is used twice");
  }

  @Test
  void theFirstProblemIsTheOneReported() {
    assertThat(
            problemAfter(
                spec -> {
                  spec.setContextWindow(0L);
                  spec.getRoles().get(0).setEngine(null);
                }))
        .isEqualTo("spec.contextWindow must be >= 1");
  }
}

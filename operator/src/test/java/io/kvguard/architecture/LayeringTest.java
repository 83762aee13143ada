package io.kvguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The functional core stays pure, and only the gate package reaches for pod writes. */
class LayeringTest {
  private static final JavaClasses MAIN = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.kvguard");

  @Test
  void verdictKnowsNoClusterNoEngineNoFramework() {
    noClasses()
      .that().resideInAPackage("io.kvguard.verdict..")
      .should().dependOnClassesThat().resideInAnyPackage(
          "io.fabric8..", "io.javaoperatorsdk..", "java.net..", "io.micrometer..", "io.kvguard.probe..",
          "io.kvguard.gate..", "io.kvguard.reconciler..", "io.kvguard.customresource..")
        .check(MAIN);
  }

  @Test
  void probesNeverTouchTheCluster() {
    noClasses()
      .that().resideInAPackage("io.kvguard.probe..")
      .should().dependOnClassesThat().resideInAnyPackage("io.fabric8.kubernetes.client..", "io.javaoperatorsdk..")
        .check(MAIN);
  }

  /**
   * Writing a pod takes the client's pod operations (pods(), a PodResource and its status subresource):
   * outside the gate (and the demo, the benchmark and the CLI, which are not the operator) nothing may reach
   * for them, whatever it would call on them. The operator reads pods from its informer. (A pod passed to the
   * generic resource(...) is not caught here; the RBAC IT and the write counts of the ITs would show it.)
   */
  @Test
  void onlyTheGateReachesForPods() {
    noClasses()
      .that().resideOutsideOfPackages("io.kvguard.gate..", "io.kvguard.demo..", "io.kvguard.bench..", "io.kvguard.cli..")
      .should().callMethod(io.fabric8.kubernetes.client.KubernetesClient.class, "pods")
      .orShould().dependOnClassesThat().areAssignableTo(io.fabric8.kubernetes.client.dsl.PodResource.class)
        .check(MAIN);
  }
}

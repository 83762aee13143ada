package io.kvguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The functional core stays pure, and only the gate package writes pods. */
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

  @Test
  void onlyTheGatePatchesPods() {
    noClasses()
      .that().resideOutsideOfPackages("io.kvguard.gate..", "io.kvguard.demo..", "io.kvguard.bench..", "io.kvguard.cli..")
      .should().callMethod(io.fabric8.kubernetes.client.dsl.PodResource.class, "patch",
          io.fabric8.kubernetes.client.dsl.base.PatchContext.class, String.class)
        .check(MAIN);
  }
}

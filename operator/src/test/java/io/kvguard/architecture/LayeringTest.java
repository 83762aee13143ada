package io.kvguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.kvguard.OperatorMain;
import org.junit.jupiter.api.Test;

/**
 * The functional core stays pure, and only the gate package reaches for pod writes. The classes
 * checked are exactly the shipped operator's (its own classes directory or jar): the test kit, the
 * demo and the benchmark are other modules and are not exempted here, they are simply not the
 * operator.
 */
class LayeringTest {
  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importUrl(OperatorMain.class.getProtectionDomain().getCodeSource().getLocation());

  @Test
  void theOperatorShipsNoTestKitDemoOrBenchmark() {
    noClasses()
        .should()
        .resideInAnyPackage("io.kvguard.testkit..", "io.kvguard.demo..", "io.kvguard.bench..")
        .orShould()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fabric8.kubernetes.client.server.mock..",
            "io.fabric8.mockwebserver..",
            "okhttp3.mockwebserver..")
        .check(MAIN);
  }

  /** The servers any pod can reach know sockets only: what they answer is handed to them. */
  @Test
  void theNonBlockingServerKnowsNothingOfKvguardOrTheCluster() {
    noClasses()
        .that()
        .resideInAPackage("io.kvguard.net..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.kvguard.probe..",
            "io.kvguard.gate..",
            "io.kvguard.reconciler..",
            "io.kvguard.webhook..",
            "io.kvguard.observe..",
            "io.fabric8..",
            "io.javaoperatorsdk..")
        .check(MAIN);
  }

  @Test
  void probesNeverImportTheGate() {
    noClasses()
        .that()
        .resideInAPackage("io.kvguard.probe..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.kvguard.gate..")
        .check(MAIN);
  }

  /** The pass hands the gate and the observer what to do; neither calls back into it. */
  @Test
  void gateAndObserveNeverImportTheReconciler() {
    noClasses()
        .that()
        .resideInAnyPackage("io.kvguard.gate..", "io.kvguard.observe..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.kvguard.reconciler..")
        .check(MAIN);
  }

  @Test
  void theApiClassesNeverImportTheReconciler() {
    noClasses()
        .that()
        .resideInAPackage("io.kvguard.customresource..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("io.kvguard.reconciler..")
        .check(MAIN);
  }

  @Test
  void verdictKnowsNoClusterNoEngineNoFramework() {
    noClasses()
        .that()
        .resideInAPackage("io.kvguard.verdict..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.fabric8..",
            "io.javaoperatorsdk..",
            "java.net..",
            "io.micrometer..",
            "io.kvguard.probe..",
            "io.kvguard.gate..",
            "io.kvguard.reconciler..",
            "io.kvguard.customresource..")
        .check(MAIN);
  }

  @Test
  void probesNeverTouchTheCluster() {
    noClasses()
        .that()
        .resideInAPackage("io.kvguard.probe..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.fabric8.kubernetes.client..", "io.javaoperatorsdk..")
        .check(MAIN);
  }

  /**
   * Writing a pod takes the client's pod operations (pods(), a PodResource and its status
   * subresource): outside the gate nothing of the operator (its {@code check} command included) may
   * reach for them, whatever it would call on them. The operator reads pods from its informer. (A
   * pod passed to the generic resource(...) is not caught here; the RBAC IT and the write counts of
   * the ITs would show it.)
   */
  @Test
  void onlyTheGateReachesForPods() {
    noClasses()
        .that()
        .resideOutsideOfPackage("io.kvguard.gate..")
        .should()
        .callMethod(io.fabric8.kubernetes.client.KubernetesClient.class, "pods")
        .orShould()
        .dependOnClassesThat()
        .areAssignableTo(io.fabric8.kubernetes.client.dsl.PodResource.class)
        .check(MAIN);
  }
}

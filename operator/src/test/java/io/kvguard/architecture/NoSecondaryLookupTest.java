package io.kvguard.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.kvguard.OperatorMain;
import org.junit.jupiter.api.Test;

/**
 * The pod informers' primary-to-secondary mapper ({@code PodCache.NO_SECONDARY_LOOKUP}) throws: it
 * is there only so that JOSDK keeps no reverse index of pods by policy (issue 28 §5). JOSDK 5.2.3
 * calls it from one place, {@code InformerEventSource.getSecondaryResources}
 * (operator-framework/java-operator-sdk v5.2.3, the only caller of {@code toSecondaryResourceIDs}),
 * which is reached from {@code Context.getSecondaryResource(s)} ({@code DefaultContext}), from
 * {@code EventSource.getSecondaryResource} and from dependent resources ({@code
 * AbstractDependentResource.getSecondaryResource}, {@code BulkDependentResource}); nothing in
 * JOSDK's controller, event source manager, dispatcher or cleanup asks it on its own. So the
 * operator must call none of those: a pass asking JOSDK for a policy's pods would fail on every
 * try. Passes read their pods from {@code PodCache}.
 */
class NoSecondaryLookupTest {
  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importUrl(OperatorMain.class.getProtectionDomain().getCodeSource().getLocation());

  /** kvguard's own probe-outcome source answers this lookup itself; it is no informer. */
  private static final String OWN_SOURCE = "io.kvguard.reconciler.ProbeEventSource";

  @Test
  void theOperatorNeverAsksJosdkForAPolicysSecondaryResources() {
    noClasses()
        .should()
        .callMethodWhere(
            DescribedPredicate.describe(
                "a JOSDK secondary-resource lookup",
                (JavaMethodCall call) ->
                    call.getTarget().getName().startsWith("getSecondaryResource")
                        && !call.getTargetOwner().getName().equals(OWN_SOURCE)))
        .because("the pod informers' primary-to-secondary mapper throws (PodCache)")
        .check(MAIN);
  }

  @Test
  void theOperatorHasNoDependentResources() {
    noClasses()
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "io.javaoperatorsdk.operator.processing.dependent..",
            "io.javaoperatorsdk.operator.api.reconciler.dependent..")
        .because(
            "dependent resources read their secondaries through the primary-to-secondary mapper")
        .check(MAIN);
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.javaoperatorsdk.operator.processing.Controller;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §2, what a busy cluster leaves behind in the operator's memory: after a few hundred
 * ModelDeployments over live pods were created and deleted, some right after creation (before or
 * while their first pass adds the finalizer), some during a rollout of their pods, every part that
 * keeps something per policy (the generation last seen, probe results, requests, tokens and router
 * proofs, the pods of the last pass and the decision on each, what the observer announced) holds
 * only the live policy. The parts are read through {@link ModelDeploymentReconciler#policyMemory}
 * (package-private: only a test has reason to read every part at once).
 */
class DeletedPolicyStateIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  /** Policies of each kind: deleted at once, deleted during their first passes, after verifying. */
  private static final int EACH = 100;

  @SuppressWarnings("unchecked")
  private ModelDeploymentReconciler reconciler() {
    return h.operator().operator().getRuntimeInfo().getRegisteredControllers().stream()
        .map(c -> (ModelDeploymentReconciler) ((Controller<ModelDeployment>) c).getReconciler())
        .findFirst()
        .orElseThrow();
  }

  private ModelDeployment policy(String name) {
    return h.create(h.modelDeployment(name, WINDOW, role("serve", Engine.SGLANG, SERVE)));
  }

  private void delete(String name) {
    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName(name)
        .delete();
  }

  private static List<String> names(String prefix) {
    return IntStream.range(0, EACH).mapToObj(i -> prefix + i).toList();
  }

  /** Every name or UID a part holds that is not the keeper's, by part. */
  private Map<String, Set<String>> leftovers(String keeperUid) {
    String keeper = OperatorHarness.NAMESPACE + "/keeper";
    return reconciler().policyMemory().entrySet().stream()
        .filter(
            part ->
                part.getValue().stream().anyMatch(k -> !k.equals(keeper) && !k.equals(keeperUid)))
        .collect(
            Collectors.toMap(
                Map.Entry::getKey,
                part ->
                    part.getValue().stream()
                        .filter(k -> !k.equals(keeper) && !k.equals(keeperUid))
                        .collect(Collectors.toSet())));
  }

  /** The kvguard series that name a ModelDeployment other than the keeper. */
  private List<String> seriesOfDeletedPolicies() {
    return Arrays.stream(h.registry.scrape().split("\n"))
        .filter(line -> line.startsWith("kvguard_") && line.contains("modeldeployment=\""))
        .filter(line -> !line.contains("modeldeployment=\"keeper\""))
        .toList();
  }

  @Test
  void afterHundredsOfPoliciesCameAndWentOnlyTheLiveOneIsRemembered() {
    for (int i = 0; i < 2; i++) {
      h.pod("serve-" + i, SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    }
    String keeperUid = policy("keeper").getMetadata().getUid();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(h.status("keeper").verified).isEqualTo("2/2"));
    long started = System.nanoTime();

    // Deleted before any pass could add the finalizer: most are gone before their first pass.
    names("quick-").forEach(name -> delete(policy(name).getMetadata().getName()));
    // Deleted while their first passes probe and write (a pass adds the finalizer just before its
    // first pod write).
    List<String> early = names("early-");
    early.forEach(this::policy);
    early.forEach(this::delete);
    // Deleted once verified, finalizer on: their deletion passes hand the pods back.
    List<String> settled = names("settled-");
    settled.forEach(this::policy);
    await()
        .atMost(Duration.ofSeconds(120))
        .untilAsserted(
            () ->
                settled.forEach(
                    name -> assertThat(h.status(name).verified).as(name).isEqualTo("2/2")));
    // A rollout under way as they go: serve-1 is gone before most of their deletion passes run, so
    // those passes cannot hand it back, nor forget what they decided for it.
    h.client.pods().inNamespace(OperatorHarness.NAMESPACE).withName("serve-1").delete();
    h.pod("serve-2", SERVE, h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)));
    settled.forEach(this::delete);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                h.client
                        .resources(ModelDeployment.class)
                        .inNamespace(OperatorHarness.NAMESPACE)
                        .list()
                        .getItems()
                        .size()
                    == 1);
    System.out.printf(
        "deleted-policy-state: %d policies created and deleted after %d ms; kept then: %s%n",
        3 * EACH,
        (System.nanoTime() - started) / 1_000_000,
        leftovers(keeperUid).entrySet().stream()
            .map(part -> part.getKey() + "=" + part.getValue().size())
            .toList());

    // Within a minute (a dozen recounts; their last Events written, so their Event-write counters
    // go), nothing of them is left; the keeper is remembered in every part.
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              assertThat(leftovers(keeperUid)).as("what deleted policies left, by part").isEmpty();
              assertThat(seriesOfDeletedPolicies()).isEmpty();
            });
    assertThat(reconciler().policyMemory())
        .allSatisfy(
            (part, held) ->
                assertThat(held)
                    .as(part)
                    .containsAnyOf(OperatorHarness.NAMESPACE + "/keeper", keeperUid));
    System.out.printf(
        "deleted-policy-state: nothing left after %d ms%n",
        (System.nanoTime() - started) / 1_000_000);
  }
}

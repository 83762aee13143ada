package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.kvguard.customresource.Engine;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testkit.EngineShapes;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Both kinds of engine advisory, end to end: one that refuses and one that only warns. */
class EngineAdvisoriesIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> PREFILL = Map.of("app", "glm", "role", "prefill");

  @Test
  void anAdvisoryWithAVerifiedFixedReleaseRefusesTheOlderBuild() {
    h.pod(
        "prefill-0",
        PREFILL,
        h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.21", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("prefill", Engine.SGLANG, PREFILL)));

    awaitGate("prefill-0", "False", "KnownUnsafeEngine");
    await()
        .untilAsserted(
            () ->
                assertThat(h.events()).extracting(Event::getReason).contains("KnownUnsafeEngine"));
  }

  @Test
  void anAdvisoryWithoutAVerifiedFixedReleaseWarnsByEventStatusNoteAndMetric() {
    h.pod(
        "prefill-0",
        PREFILL,
        h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_040_000)));
    h.pod(
        "prefill-1",
        PREFILL,
        h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.22", 2_040_000)));
    h.create(h.modelDeployment("glm", WINDOW, role("prefill", Engine.SGLANG, PREFILL)));

    // The gate is shut by the incident's advisory, whose fixed release 0.5.22 is named by the
    // post-mortem alone; the warning advisory adds no refusal of its own (EngineAdvisoriesTest
    // shows
    // a warned pod verified).
    awaitGate("prefill-0", "False", "KnownUnsafeEngine");
    awaitGate("prefill-1", "False", "KnownUnsafeEngine");
    assertThat(h.gate("prefill-0").orElseThrow().getMessage())
        .contains("sglang-pd-abort-before-0.5.22", "post-mortem alone")
        .doesNotContain("sglang-pd-admission-abort");
    await()
        .untilAsserted(
            () ->
                assertThat(h.status("glm").roles.get(0).notes)
                    .anySatisfy(
                        note ->
                            assertThat(note)
                                .startsWith(
                                    "engine advisory sglang-pd-admission-abort (warning) applies to 2 of 2 pods (prefill-0, prefill-1):")
                                .contains(
                                    "kvguard warns instead of refusing because no fixed release is verified")));
    await()
        .untilAsserted(
            () ->
                assertThat(h.events())
                    .filteredOn(e -> e.getReason().equals("EngineAdvisoryWarning"))
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getMessage()).contains("sglang-pd-admission-abort");
                        }));
    await()
        .untilAsserted(
            () ->
                assertThat(h.registry.scrape())
                    .containsPattern(
                        "kvguard_engine_advisory_warnings\\{[^}]*advisory=\"sglang-pd-admission-abort\"[^}]*role=\"prefill\"[^}]*\\} 2"));
  }
}

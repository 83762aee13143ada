package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.gate.GateNames;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 §4 applied to rejection probes: eight namespaces whose SGLang engines pass the pool
 * check, take the rejection prompt and never answer it (rejection timeout 60 s) hold the four
 * rejection threads under the rule before; another namespace's rejection probe, and so its gate,
 * then waited for their timeout. With the rejection probes' hung budget its pod is verified within
 * seconds. {@code -Dkvguard.it.hungProbeLimit=0} runs it under the rule before, where it fails.
 */
class HangingRejectionNamespacesIT {
  private static final long WINDOW = 1_048_576;
  private static final int HANGING_NAMESPACES = 8;
  private static final int REJECTION_TIMEOUT_SECONDS = 60;

  /**
   * The innocent pod's pool probe, its two refused prompts (about 4 MiB each) and its gate write,
   * plus the 0.5 s threshold twice (eight hanging probes pass it four at a time): far below the 60
   * s the hanging probes would hold the threads.
   */
  private static final Duration INNOCENT_WITHIN = Duration.ofSeconds(15);

  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  private final OperatorHarness h = new OperatorHarness();

  @AfterEach
  void stop() {
    h.close();
  }

  private static KvguardConfig config(int hungProbeLimit) {
    return new KvguardConfig(
        Set.of(),
        0,
        true,
        OperatorHarness.OPERATOR_NAMESPACE,
        8,
        EngineHttp.DEFAULT_MAX_BODY_BYTES,
        "kvguard-test-0",
        0,
        "0.0.0.0",
        4,
        KvguardConfig.DEFAULT_REJECTION_PROBE_CONCURRENCY,
        RejectionProbe.DEFAULT_MAX_PROMPT_TOKENS,
        KvguardConfig.DEFAULT_VERDICT_KEY_SECRET,
        KvguardConfig.DEFAULT_POD_LIST_CONCURRENCY,
        hungProbeLimit);
  }

  private static Map<String, FakeEngine.Answer> sglang(FakeEngine.Answer generate) {
    Map<String, FakeEngine.Answer> answers =
        new HashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.18", 2_040_000));
    answers.put("/generate", generate);
    return answers;
  }

  private ModelDeployment withRejectionProbe(String namespace) {
    ModelDeployment md = h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE));
    md.getMetadata().setNamespace(namespace);
    RejectionProbeSpec probe = new RejectionProbeSpec();
    probe.setEnabled(true);
    probe.setTimeoutSeconds(REJECTION_TIMEOUT_SECONDS);
    md.getSpec().setRejectionProbe(probe);
    return md;
  }

  @Test
  void eightNamespacesOfEnginesThatNeverAnswerTheRejectionPromptDoNotDelayAnotherNamespace() {
    String limit = System.getProperty("kvguard.it.hungProbeLimit");
    h.start(config(limit == null ? 256 : Integer.parseInt(limit)));
    List<FakeEngine> hanging = new ArrayList<>();
    List<String> namespaces = new ArrayList<>();
    for (int n = 0; n < HANGING_NAMESPACES; n++) {
      String ns = "hang-" + n;
      namespaces.add(ns);
      h.client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      // Passes the pool check, then holds the prompt far past the rejection timeout.
      FakeEngine engine = h.engine(sglang(FakeEngine.Answer.json("{}").delayedBy(10 * 60 * 1000L)));
      hanging.add(engine);
      h.pods.createRunning(ns, "serve-0", SERVE, engine.port(), true);
      h.client.resource(withRejectionProbe(ns)).create();
    }
    // The rejection threads are taken: four hanging prompts at least are in flight.
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> hanging.stream().filter(e -> e.hits("/generate") > 0).count() >= 4);

    FakeEngine innocent =
        h.engine(sglang(EngineShapes.refusesOverLong(WINDOW + 1, WINDOW)))
            .answerBy(
                "/generate",
                EngineShapes.sglangGenerate(
                    WINDOW, WINDOW - 6, n -> EngineShapes.refusesBand(n, WINDOW - 6)));
    h.pod("serve-0", SERVE, innocent);
    long created = System.nanoTime();
    h.create(withRejectionProbe(OperatorHarness.NAMESPACE));

    await()
        .atMost(INNOCENT_WITHIN)
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("PoolSufficient");
                          assertThat(c.getStatus()).isEqualTo("True");
                        }));
    System.out.printf(
        "hanging rejection namespaces: innocent pod verified %d ms after its ModelDeployment was"
            + " created%n",
        (System.nanoTime() - created) / 1_000_000);
    // Nothing of the hanging namespaces opened: their rejection probes are still waiting.
    for (String ns : namespaces) {
      Pod pod = h.client.pods().inNamespace(ns).withName("serve-0").get();
      assertThat(java.util.Objects.requireNonNullElse(pod.getStatus().getConditions(), List.of()))
          .as("%s/serve-0", ns)
          .noneMatch(
              c -> GateNames.CONDITION_TYPE.equals(c.getType()) && "True".equals(c.getStatus()));
      assertThat(pod.getMetadata().getLabels())
          .doesNotContainEntry(GateNames.VERIFIED_LABEL, "true");
    }
    // The hanging rejection probes are on their hung budget, one per namespace: visible.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(h.registry.scrape())
                    .contains("kvguard_rejection_probes_hung{namespace=\"hang-0\"} 1"));
  }
}

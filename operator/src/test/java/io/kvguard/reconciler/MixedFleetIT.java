package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvguard.customresource.AdvisoryMode;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One ModelDeployment whose roles run every engine kvguard knows, each judged from its own answers.
 */
class MixedFleetIT {
  private static final long WINDOW = 131_072;
  private OperatorHarness h;

  @BeforeEach
  void start() {
    h = new OperatorHarness().start();
  }

  @AfterEach
  void stop() {
    h.close();
  }

  private void pod(String name, String role, Map<String, Answer> answers) {
    h.pod(name, Map.of("app", "fleet", "role", role), h.engine(answers));
  }

  private static RoleSpec fleetRole(String name, Engine engine) {
    return role(name, engine, Map.of("app", "fleet", "role", name));
  }

  private Consumer<PodCondition> gate(String status, String reason) {
    return c -> {
      assertThat(c.getReason()).isEqualTo(reason);
      assertThat(c.getStatus()).isEqualTo(status);
    };
  }

  private PodVerdictStatus status(String pod) {
    return h.status("fleet").pods.stream()
        .filter(p -> p.name.equals(pod))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void everyEngineIsJudgedFromWhereItRevealsItsPoolAndAdvisoriesCanBeSwitchedOff() {
    pod(
        "sglang-prefill-0",
        "prefill",
        EngineShapes.sglang(WINDOW, "prefill", "0.5.21", 400_000, 400_000));
    pod("sglang-decode-0", "decode", EngineShapes.sglang(WINDOW, "decode", "0.5.22", 800_000));
    pod("vllm-0", "vllm", EngineShapes.vllm(WINDOW, 99_999, 16, 262_144L));
    pod("tgi3-0", "tgi", EngineShapes.tgi3(WINDOW, 250_000, "3.0.1"));
    pod("tgi22-0", "tgi", EngineShapes.tgi22(WINDOW, 100_000, "2.2.0"));
    pod("triton-0", "trtllm", EngineShapes.tritonTrtllm(6239, 64));
    pod("llama-0", "llamacpp", EngineShapes.llamacpp(WINDOW, 2, "b5500-0d4a1c2"));
    pod(
        "llama-broken-0",
        "llamacpp",
        Map.of("/props", Answer.json("{\"default_generation_settings\":{}}")));
    pod("ollama-0", "ollama", EngineShapes.ollama("0.9.7", 8192));
    pod(
        "inhouse-0",
        "generic",
        Map.of(
            "/stats",
            Answer.json("{\"kv\":{\"blocks\":16384,\"block_size\":16},\"max_prompt\":131072}")));

    RoleSpec generic = fleetRole("generic", Engine.GENERIC);
    GenericProbeSpec settings = new GenericProbeSpec();
    settings.setPath("/stats");
    GenericValueSource pool = new GenericValueSource();
    pool.setJsonPointer("/kv/blocks");
    pool.setMultiplier(16L);
    settings.setPool(pool);
    GenericValueSource context = new GenericValueSource();
    context.setJsonPointer("/max_prompt");
    settings.setEngineContext(context);
    generic.setGeneric(settings);
    // Triton's block count is only an upper bound of the GPU pool; this role declares it exact (no
    // host offload, one attention window), so it may verify. TritonMetricsPortIT shows the gate
    // without the declaration.
    RoleSpec trtllm = fleetRole("trtllm", Engine.TRTLLM);
    trtllm.setBlockCountIsPool(true);
    ModelDeployment md =
        h.modelDeployment(
            "fleet",
            WINDOW,
            fleetRole("prefill", Engine.SGLANG),
            fleetRole("decode", Engine.SGLANG),
            fleetRole("vllm", Engine.VLLM),
            fleetRole("tgi", Engine.TGI),
            trtllm,
            fleetRole("llamacpp", Engine.LLAMACPP),
            fleetRole("ollama", Engine.OLLAMA),
            generic);
    h.create(md);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(h.gate("sglang-prefill-0"))
                  .hasValueSatisfying(gate("False", "KnownUnsafeEngine"));
              // 0.5.22, named as fixed by the incident's post-mortem alone, clears no
              // prefill/decode pod.
              assertThat(h.gate("sglang-decode-0"))
                  .hasValueSatisfying(gate("False", "KnownUnsafeEngine"));
              assertThat(h.gate("vllm-0")).hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.gate("tgi3-0")).hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.gate("tgi22-0")).hasValueSatisfying(gate("False", "PoolTooSmall"));
              assertThat(h.gate("triton-0")).hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.gate("llama-0")).hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.gate("llama-broken-0")).hasValueSatisfying(gate("False", "ProbeFailed"));
              assertThat(h.gate("ollama-0"))
                  .hasValueSatisfying(gate("False", "EngineContextTooShort"));
              assertThat(h.gate("inhouse-0")).hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.status("fleet").verified).isEqualTo("5/10");
            });
    assertThat(h.gate("sglang-decode-0").orElseThrow().getMessage())
        .contains("post-mortem alone", "--pd-router", "spec.engineAdvisories: Disabled");
    assertThat(h.gate("sglang-prefill-0").orElseThrow().getMessage())
        .contains("to_finish")
        .contains("finished_reason");
    assertThat(h.gate("llama-broken-0").orElseThrow().getMessage())
        .isEqualTo("/props reports no default_generation_settings.n_ctx");
    assertThat(h.gate("ollama-0").orElseThrow().getMessage())
        .startsWith("engine exposes no KV pool: its context length 8192 tokens");
    assertThat(h.labelled("sglang-prefill-0")).isFalse();
    assertThat(h.labelled("triton-0")).isTrue();
    assertThat(status("triton-0").poolTokens).isEqualTo(399_296L);
    assertThat(status("triton-0").notes)
        .anySatisfy(n -> assertThat(n).startsWith("one KV capacity is exported"));
    assertThat(status("ollama-0").notes)
        .contains(
            "Ollama exposes no KV pool: the loaded model's context length is used as the bound");
    assertThat(status("tgi3-0").engineVersion).isEqualTo("3.0.1");
    assertThat(status("inhouse-0").poolTokens).isEqualTo(262_144L);
    assertThat(h.condition("fleet", "Ready")).hasValue("False");

    h.client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("fleet")
        .edit(
            current -> {
              current.getSpec().setEngineAdvisories(AdvisoryMode.Disabled);
              return current;
            });
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(h.gate("sglang-prefill-0"))
                  .hasValueSatisfying(gate("True", "PoolSufficient"));
              assertThat(h.labelled("sglang-prefill-0")).isTrue();
              assertThat(h.gate("sglang-decode-0"))
                  .hasValueSatisfying(gate("True", "PoolSufficient"));
            });
    assertThat(h.gate("tgi22-0")).hasValueSatisfying(gate("False", "PoolTooSmall"));
  }
}

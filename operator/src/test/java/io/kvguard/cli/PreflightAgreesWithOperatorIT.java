package io.kvguard.cli;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The preflight and the operator read a spec the same way: the operator gates a pod, {@code check}
 * probes the same engine with the same ModelDeployment, and both reach the same reason. The version
 * rules are where they used to part: {@code check} judged without them, so it cleared engines the
 * operator refuses.
 */
class PreflightAgreesWithOperatorIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> PREFILL = Map.of("app", "glm", "role", "prefill");

  @TempDir Path dir;

  @Test
  void anAdvisoryRefusesInBothWithTheDefaultSpecAndItsFlags() throws IOException {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, "prefill", "0.5.21", 2_040_000));
    h.pod("prefill-0", PREFILL, engine);
    ModelDeployment md =
        h.create(h.modelDeployment("glm", WINDOW, role("prefill", Engine.SGLANG, PREFILL)));

    awaitGate("prefill-0", "False", "KnownUnsafeEngine");
    assertThat(reason(check("--model-deployment", file(md), "--url", url(engine))))
        .isEqualTo("KnownUnsafeEngine");
    // The flags describe the same spec (every other field at its default): advisories are on there
    // too.
    assertThat(
            reason(
                check(
                    "--engine",
                    "sglang",
                    "--context-window",
                    Long.toString(WINDOW),
                    "--url",
                    url(engine))))
        .isEqualTo("KnownUnsafeEngine");
  }

  @Test
  void aMinimumEngineVersionRefusesInBoth() throws IOException {
    FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    h.pod("prefill-0", PREFILL, engine);
    RoleSpec role = role("prefill", Engine.SGLANG, PREFILL);
    role.setMinEngineVersion("0.5.23");
    ModelDeployment md = h.create(h.modelDeployment("glm", WINDOW, role));

    awaitGate("prefill-0", "False", "EngineVersionTooOld");
    assertThat(reason(check("--model-deployment", file(md), "--url", url(engine))))
        .isEqualTo("EngineVersionTooOld");
  }

  @Test
  void aPoolThatHoldsTheWindowIsVerifiedByBothAndOneThatDoesNotIsRefusedByBoth()
      throws IOException {
    FakeEngine big = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    FakeEngine small = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 681_280));
    h.pod("big-0", Map.of("app", "glm", "role", "big"), big);
    h.pod("small-0", Map.of("app", "glm", "role", "small"), small);
    ModelDeployment md =
        h.create(
            h.modelDeployment(
                "glm",
                WINDOW,
                role("big", Engine.SGLANG, Map.of("app", "glm", "role", "big")),
                role("small", Engine.SGLANG, Map.of("app", "glm", "role", "small"))));

    awaitGate("big-0", "True", "PoolSufficient");
    awaitGate("small-0", "False", "PoolTooSmall");
    assertThat(reason(check("--model-deployment", file(md), "--role", "big", "--url", url(big))))
        .isEqualTo("PoolSufficient");
    assertThat(
            reason(check("--model-deployment", file(md), "--role", "small", "--url", url(small))))
        .isEqualTo("PoolTooSmall");
  }

  /**
   * spec.probe.timeoutSeconds bounds a whole probe in the operator (every request of it shares one
   * deadline), so an engine whose three answers each take most of the deadline fails there; check
   * used to give each request a whole deadline and verified it.
   */
  @Test
  void anEngineTooSlowForOneProbeDeadlineFailsInBoth() throws IOException {
    Map<String, FakeEngine.Answer> slow = new java.util.LinkedHashMap<>();
    EngineShapes.vllm(WINDOW, 131_072, 16)
        .forEach((path, answer) -> slow.put(path, answer.delayedBy(700)));
    FakeEngine engine = h.engine(slow);
    h.pod("slow-0", Map.of("app", "glm", "role", "slow"), engine);
    ModelDeployment md =
        h.modelDeployment(
            "glm", WINDOW, role("slow", Engine.VLLM, Map.of("app", "glm", "role", "slow")));
    md.getSpec().setProbe(new io.kvguard.customresource.ProbeSpec());
    md.getSpec().getProbe().setTimeoutSeconds(1);
    md = h.create(md);

    awaitGate("slow-0", "False", "ProbeFailed");
    assertThat(reason(check("--model-deployment", file(md), "--url", url(engine))))
        .isEqualTo("ProbeFailed");
  }

  /**
   * A role's metricsPort is where the operator reads the metrics page (Triton serves it on 8002,
   * not on the inference port); check read it on --url's port, found nothing there, and failed an
   * engine the operator judges.
   */
  @Test
  void aRolesMetricsPortIsReadByBoth() throws IOException {
    FakeEngine inference = h.engine(Map.of("/v2/health/ready", FakeEngine.Answer.json("{}")));
    FakeEngine metrics = h.engine(EngineShapes.tritonTrtllm(32_768, 64));
    h.pod("triton-0", Map.of("app", "glm", "role", "serve"), inference);
    RoleSpec triton = role("serve", Engine.TRTLLM, Map.of("app", "glm", "role", "serve"));
    triton.setMetricsPort(new io.fabric8.kubernetes.api.model.IntOrString(metrics.port()));
    triton.setBlockCountIsPool(true);
    ModelDeployment md = h.create(h.modelDeployment("glm", WINDOW, triton));

    awaitGate("triton-0", "True", "PoolSufficient");
    assertThat(reason(check("--model-deployment", file(md), "--url", url(inference))))
        .isEqualTo("PoolSufficient");
  }

  private String file(ModelDeployment md) throws IOException {
    Path file = dir.resolve(md.getMetadata().getName() + ".yaml");
    Files.writeString(file, h.client.getKubernetesSerialization().asYaml(md));
    return file.toString();
  }

  private static String url(FakeEngine engine) {
    return "http://127.0.0.1:" + engine.port();
  }

  private static String check(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    String[] withJson =
        java.util.stream.Stream.concat(
                java.util.Arrays.stream(args), java.util.stream.Stream.of("--output", "json"))
            .toArray(String[]::new);
    new CheckCommand(EngineProbes.standard(EngineHttp.createDefault()))
        .run(
            withJson,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    return out.toString(StandardCharsets.UTF_8);
  }

  private static String reason(String json) throws IOException {
    JsonNode report = new ObjectMapper().readTree(json);
    return report.path("reason").asText();
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.SecretKeyRef;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testing.RealLlamaCppTest;
import io.kvguard.testkit.LlamaServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The operator, as production wires it, against real llama-servers (upstream llama.cpp, the binary
 * {@code KVGUARD_LLAMA_SERVER} names) serving a tiny random model: every answer judged here is the
 * engine's own, for the server flags that decide a slot's context.
 */
class LlamaCppRealEngineIT extends RealLlamaCppTest {
  private static final long WINDOW = 8192;
  private static final Map<String, String> SERVE = Map.of("app", "tiny", "role", "serve");
  private static final String TOKEN = "llama-api-key-5c1e9b7a";

  private ModelDeployment model(long window) {
    return h.modelDeployment("tiny", window, role("serve", Engine.LLAMACPP, SERVE));
  }

  /**
   * The pod's verdict in the status, once it carries the gate's reason (status trails the gate).
   */
  private PodVerdictStatus verdict(String pod) {
    String reason = h.gate(pod).orElseThrow().getReason();
    return await()
        .atMost(Duration.ofSeconds(20))
        .ignoreExceptions()
        .until(
            () ->
                h.status("tiny").pods.stream()
                    .filter(p -> pod.equals(p.name) && reason.equals(p.reason))
                    .findFirst(),
            Optional::isPresent)
        .orElseThrow();
  }

  @Test
  void aSlotThatHoldsTheWindowIsVerified() throws IOException {
    pod("serve-0", SERVE, server(8192, "-np", "1"));
    h.create(model(WINDOW));

    awaitGate("serve-0", "True", "PoolSufficient");
    assertThat(h.labelled("serve-0")).isTrue();
    assertThat(h.gate("serve-0").orElseThrow().getMessage())
        .contains("engine version b0-unknown (not a release version)");
    PodVerdictStatus seen = verdict("serve-0");
    assertThat(seen.poolTokens).isEqualTo(8192L);
    assertThat(seen.engineContextTokens).isEqualTo(8192L);
    assertThat(seen.engineVersion).isEqualTo("b0-unknown");
  }

  @Test
  void aWindowLongerThanTheSlotIsRefused() throws IOException {
    pod("serve-0", SERVE, server(4096, "-np", "1"));
    h.create(model(WINDOW));

    awaitGate("serve-0", "False", "PoolTooSmall");
    assertThat(h.labelled("serve-0")).isFalse();
    assertThat(verdict("serve-0").poolTokens).isEqualTo(4096L);
  }

  @Test
  void fourSlotsSplitTheCacheUnlessItIsUnified() throws IOException {
    // -np 4 gives each slot a quarter of -c; -kvu makes every slot span the one shared cache.
    pod("split-0", SERVE, server(8192, "-np", "4"));
    pod("unified-0", SERVE, server(8192, "-np", "4", "-kvu"));
    h.create(model(WINDOW));

    awaitGate("split-0", "False", "PoolTooSmall");
    awaitGate("unified-0", "True", "PoolSufficient");
    assertThat(verdict("split-0").poolTokens).isEqualTo(2048L);
    assertThat(verdict("unified-0").poolTokens).isEqualTo(8192L);
  }

  @Test
  void theDefaultAutoParallelServerIsJudgedByOneSlotNeverByFourTimesIt() throws Exception {
    // No -np: llama-server picks 4 slots on one unified cache, and each slot's n_ctx is the whole
    // cache. A request of up to n_ctx tokens is admitted whole (longer ones get HTTP 400), so the
    // slot covers the window; what it cannot promise is room while other slots hold the cache,
    // and then the server answers 500, never a truncated 200. So: verified, once, not 4 x 8192.
    LlamaServer server = server(8192);
    JsonNode slots = get(server, "/slots");
    assertThat(slots).hasSize(4);
    slots.forEach(slot -> assertThat(slot.get("n_ctx").asLong()).isEqualTo(8192));
    pod("serve-0", SERVE, server);
    h.create(model(WINDOW));

    awaitGate("serve-0", "True", "PoolSufficient");
    PodVerdictStatus seen = verdict("serve-0");
    assertThat(seen.poolTokens).isEqualTo(8192L);
    assertThat(seen.notes).anySatisfy(note -> assertThat(note).startsWith("total_slots 4:"));
    assertThat(String.join(" ", seen.notes)).doesNotContain("32768");
  }

  @Test
  void theVerdictDoesNotDependOnMetricsBeingServed() throws IOException {
    pod("metrics-0", SERVE, server(8192, "-np", "1", "--metrics"));
    pod("plain-0", SERVE, server(8192, "-np", "1"));
    pod("metrics-short-0", SERVE, server(4096, "-np", "1", "--metrics"));
    h.create(model(WINDOW));

    awaitGate("metrics-0", "True", "PoolSufficient");
    awaitGate("plain-0", "True", "PoolSufficient");
    awaitGate("metrics-short-0", "False", "PoolTooSmall");
    assertThat(verdict("metrics-0").poolTokens).isEqualTo(verdict("plain-0").poolTokens);
  }

  @Test
  void aServerWithAnApiKeyIsProbedWithTheSecretsTokenAndTheTokenIsWrittenNowhere()
      throws IOException {
    h.rbacValues("probeCredentials: {enabled: true, secretNames: [llama-key]}");
    h.client
        .secrets()
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("llama-key")
                .endMetadata()
                .addToStringData("token", TOKEN)
                .build())
        .create();
    pod("serve-0", SERVE, server(8192, "-np", "1", "--api-key", TOKEN));
    ModelDeployment md = model(WINDOW);
    ProbeSpec probe = new ProbeSpec();
    SecretKeyRef ref = new SecretKeyRef();
    ref.setName("llama-key");
    probe.setAuthSecretRef(ref);
    md.getSpec().setProbe(probe);
    h.create(md);

    awaitGate("serve-0", "True", "PoolSufficient");
    String written =
        h.client.getKubernetesSerialization().asJson(h.get("tiny"))
            + h.client.getKubernetesSerialization().asJson(h.events())
            + h.client.getKubernetesSerialization().asJson(h.getPod("serve-0"));
    assertThat(written).doesNotContain(TOKEN);
  }

  @Test
  void aServerWithAnApiKeyProbedWithoutOneFailsClosedWithHttp401() throws IOException {
    pod("serve-0", SERVE, server(8192, "-np", "1", "--api-key", TOKEN));
    h.create(model(WINDOW));

    awaitGate("serve-0", "False", "ProbeFailed");
    assertThat(h.gate("serve-0").orElseThrow().getMessage()).contains("HTTP 401");
    assertThat(h.labelled("serve-0")).isFalse();
  }

  @Test
  void theRejectionProbeMeetsTheRealRefusalAlsoWithContextShift() throws IOException {
    // At d14ce3dab --context-shift acts only while generating: an over-long prompt is still
    // refused at admission with HTTP 400 exceed_context_size_error.
    pod("serve-0", SERVE, server(8192, "-np", "1"));
    pod("shift-0", SERVE, server(8192, "-np", "1", "--context-shift"));
    ModelDeployment md = model(WINDOW);
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    rejection.setTimeoutSeconds(20);
    md.getSpec().setRejectionProbe(rejection);
    h.create(md);

    // The L1 prompt is N = S = 8192 (issue 26): the real server refuses a prompt of exactly its
    // slot context (N >= S, server-context.cpp:2500-2507), and the record lists that path.
    String l1 =
        "L1 slot context check (N >= n_ctx) refused 8192 tokens with HTTP 400 as"
            + " exceed_context_size_error, whole answer matched";
    for (String pod : new String[] {"serve-0", "shift-0"}) {
      awaitGate(pod, "True", "PoolSufficient");
      assertThat(h.gate(pod).orElseThrow().getMessage())
          .contains(
              "one prompt per admission path was refused, each by its own check (" + l1 + ")");
      PodVerdictStatus seen = verdict(pod);
      assertThat(seen.rejectionPromptTokens).as("the probe's key, S + margin").isEqualTo(8193L);
      assertThat(seen.rejectionRefusalStatus).isEqualTo(400);
      assertThat(seen.rejectionRefusalError).isEqualTo("paths: " + l1);
    }
  }

  private static JsonNode get(LlamaServer server, String path) throws Exception {
    HttpResponse<String> answer =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(server.url() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).as(path).isEqualTo(200);
    return new ObjectMapper().readTree(answer.body());
  }
}

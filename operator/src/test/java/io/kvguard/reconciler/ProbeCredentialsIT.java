package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.SecretKeyRef;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** probe.authSecretRef: the token reaches the engine, and only the engine. */
class ProbeCredentialsIT extends EmbeddedClusterTest {
  private static final String TOKEN = "engine-bearer-9d41f0c2e7";
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");

  @org.junit.jupiter.api.BeforeEach
  void allowTheSecretsInTheChart() {
    h.rbacValues("probeCredentials: {enabled: true, secretNames: [engine-token, no-such-secret]}");
  }

  private ModelDeployment withSecret(String secretName) {
    ModelDeployment md = h.modelDeployment("glm", 1_048_576, role("serve", Engine.SGLANG, SERVE));
    ProbeSpec probe = new ProbeSpec();
    SecretKeyRef ref = new SecretKeyRef();
    ref.setName(secretName);
    probe.setAuthSecretRef(ref);
    md.getSpec().setProbe(probe);
    return md;
  }

  /** The Secret engine-token of the namespace, holding {@code token}. */
  private void engineToken(String token) {
    h.client
        .secrets()
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("engine-token")
                .endMetadata()
                .addToStringData("token", token)
                .build())
        .create();
  }

  @Test
  void anEngineThatNeedsATokenIsProbedWithItAndTheTokenIsWrittenNowhere() {
    FakeEngine engine =
        h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000)).requireBearer(TOKEN);
    engineToken(TOKEN);
    h.pod("serve-0", SERVE, engine);
    h.create(withSecret("engine-token"));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(
                        c -> assertThat(c.getReason()).isEqualTo("PoolSufficient")));
    String written =
        h.client.getKubernetesSerialization().asJson(h.get("glm"))
            + h.client.getKubernetesSerialization().asJson(h.events())
            + h.client.getKubernetesSerialization().asJson(h.getPod("serve-0"));
    assertThat(written).doesNotContain(TOKEN);
  }

  @Test
  void aTokenSentOverPlainHttpIsNamedInTheStatusAndAWarningEvent() {
    FakeEngine engine =
        h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000)).requireBearer(TOKEN);
    engineToken(TOKEN);
    h.pod("serve-0", SERVE, engine);
    h.create(withSecret("engine-token"));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.status("glm").roles)
                  .singleElement()
                  .satisfies(
                      role ->
                          assertThat(role.notes)
                              .anySatisfy(
                                  note ->
                                      assertThat(note)
                                          .startsWith(RoleNotes.CLEARTEXT_CREDENTIALS)
                                          .contains("scheme: https")));
              assertThat(h.events())
                  .anySatisfy(
                      event -> {
                        assertThat(event.getReason()).isEqualTo("CredentialsInClearText");
                        assertThat(event.getType()).isEqualTo("Warning");
                        assertThat(event.getMessage()).contains("role serve");
                      });
            });
  }

  @Test
  void aMissingSecretFailsClosedAndNamesTheSecret() {
    FakeEngine engine =
        h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000)).requireBearer(TOKEN);
    h.pod("serve-0", SERVE, engine);
    h.create(withSecret("no-such-secret"));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("False");
                          assertThat(c.getReason()).isEqualTo("ProbeFailed");
                          assertThat(c.getMessage())
                              .contains("Secret inference/no-such-secret key token does not exist");
                        }));
    assertThat(engine.totalHits()).isZero();
  }

  @Test
  void aWrongTokenIsAFailedProbe() {
    FakeEngine engine =
        h.engine(EngineShapes.sglang(1_048_576, null, "0.5.22", 2_040_000)).requireBearer(TOKEN);
    engineToken("stale");
    h.pod("serve-0", SERVE, engine);
    h.create(withSecret("engine-token"));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(h.gate("serve-0"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo("ProbeFailed");
                          assertThat(c.getMessage()).contains("HTTP 401");
                        }));
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.kvguard.customresource.CaBundleRef;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.ProbeTlsSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.Scheme;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testing.PrivateCa;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * spec.probe.tls through the operator: engines serving a certificate of a private CA for their
 * Service name are verified with the CA bundle from a Secret or a ConfigMap and the server name;
 * without it, with a wrong name, or with a bundle that cannot be read, the gate stays shut with
 * ProbeFailed saying what to change. The operator's requests are checked against the chart's RBAC
 * with probeTls on (OperatorHarness.close).
 */
class ProbeTlsIT {
  private static final long WINDOW = 1_048_576;
  private static final String SERVER_NAME = "glm-engine.inference.svc";
  private OperatorHarness h;
  private FakeEngine engine;

  @BeforeEach
  void start() {
    h =
        new OperatorHarness()
            .rbacValues(
                "probeTls: {enabled: true, secretNames: [engine-ca, no-such-ca], configMapNames: [engine-ca-bundle]}");
    PrivateCa ca = PrivateCa.create("kvguard test CA");
    engine = ca.issue(SERVER_NAME).serve(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    // As cert-manager writes a Certificate's Secret (ca.crt beside tls.crt) and trust-manager a
    // bundle ConfigMap.
    h.client
        .secrets()
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("engine-ca")
                .endMetadata()
                .withType("kubernetes.io/tls")
                .addToData(
                    "ca.crt",
                    Base64.getEncoder()
                        .encodeToString(ca.caPem.getBytes(StandardCharsets.US_ASCII)))
                .build())
        .create();
    h.client
        .configMaps()
        .inNamespace(OperatorHarness.NAMESPACE)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("engine-ca-bundle")
                .endMetadata()
                .addToData("bundle.pem", ca.caPem)
                .build())
        .create();
    h.start();
  }

  @AfterEach
  void stop() {
    h.close();
    engine.close();
  }

  private static CaBundleRef ref(String name, String key) {
    CaBundleRef ref = new CaBundleRef();
    ref.setName(name);
    if (key != null) {
      ref.setKey(key);
    }
    return ref;
  }

  /** One ModelDeployment over one pod of the TLS engine, probed over https with these settings. */
  private void policy(String name, ProbeTlsSpec tls) {
    Map<String, String> labels = Map.of("app", name);
    h.pod(name + "-0", labels, engine);
    RoleSpec role = OperatorHarness.role("serve", Engine.SGLANG, labels);
    role.setScheme(Scheme.HTTPS);
    ModelDeployment md = h.modelDeployment(name, WINDOW, role);
    ProbeSpec probe = new ProbeSpec();
    probe.setTls(tls);
    md.getSpec().setProbe(probe);
    h.create(md);
  }

  private static ProbeTlsSpec tls(CaBundleRef secret, CaBundleRef configMap, String serverName) {
    ProbeTlsSpec tls = new ProbeTlsSpec();
    tls.setCaSecretRef(secret);
    tls.setCaConfigMapRef(configMap);
    tls.setServerName(serverName);
    return tls;
  }

  private void awaitGate(String pod, String status, String reason, String message) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(h.gate(pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo(status);
                          assertThat(c.getReason()).isEqualTo(reason);
                          assertThat(c.getMessage()).contains(message);
                        }));
  }

  @Test
  void theCaFromASecretOrAConfigMapAndTheServerNameVerifyTheEngine() {
    policy("by-secret", tls(ref("engine-ca", null), null, SERVER_NAME));
    policy("by-configmap", tls(null, ref("engine-ca-bundle", "bundle.pem"), SERVER_NAME));
    awaitGate("by-secret-0", "True", "PoolSufficient", "KV pool 2040000 tokens");
    awaitGate("by-configmap-0", "True", "PoolSufficient", "KV pool 2040000 tokens");
    await().untilAsserted(() -> assertThat(h.labelled("by-secret-0")).isTrue());
  }

  @Test
  void withoutProbeTlsOrWithAWrongNameOrAnUnreadableBundleTheGateStaysShutSayingWhy() {
    policy("no-tls", null);
    policy("wrong-name", tls(ref("engine-ca", null), null, "other.inference.svc"));
    policy("no-name", tls(ref("engine-ca", null), null, null));
    policy("missing-ca", tls(ref("no-such-ca", null), null, SERVER_NAME));
    awaitGate(
        "no-tls-0",
        "False",
        "ProbeFailed",
        "TLS failure: the engine's certificate is not issued by a CA the"
            + " probe trusts (the JVM's default trust store); set probe.tls.caSecretRef or probe.tls.caConfigMapRef");
    awaitGate(
        "wrong-name-0",
        "False",
        "ProbeFailed",
        "TLS failure: the engine's certificate does not carry the name other.inference.svc (probe.tls.serverName)");
    awaitGate(
        "no-name-0",
        "False",
        "ProbeFailed",
        "the engine's certificate does not name 127.0.0.1, the address probed; set probe.tls.serverName");
    awaitGate(
        "missing-ca-0",
        "False",
        "ProbeFailed",
        "probe TLS: Secret inference/no-such-ca key ca.crt does not exist");
    for (String pod : new String[] {"no-tls-0", "wrong-name-0", "no-name-0", "missing-ca-0"}) {
      assertThat(h.labelled(pod)).as(pod).isFalse();
    }
    // The engine was never asked without verification: every refused connection failed in the
    // handshake.
    assertThat(engine.hits("/server_info")).isZero();
  }
}

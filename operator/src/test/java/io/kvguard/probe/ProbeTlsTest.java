package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testing.PrivateCa;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.ProbeOutcome;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An engine behind TLS with a certificate from a private CA, for a Service name, never for the pod
 * IP the probe connects to: verified with probe.tls (the CA and the name), and refused, naming what
 * to change, without it.
 */
class ProbeTlsTest {
  private static final long WINDOW = 1_048_576;
  private static final String NAME = "glm-engine.inference.svc";
  private static final Map<String, FakeEngine.Answer> SGLANG =
      EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000);
  private static PrivateCa ca;
  private static PrivateCa otherCa;
  private static PrivateCa.Engine tls;
  private static FakeEngine engine;
  private static FakeEngine wildcardEngine;
  private static FakeEngine otherCaEngine;
  private final EngineHttp http = EngineHttp.createDefault();

  @BeforeAll
  static void engines() {
    ca = PrivateCa.create("kvguard test CA");
    otherCa = PrivateCa.create("some other CA");
    tls = ca.issue(NAME, "glm-engine");
    engine = tls.serve(SGLANG);
    wildcardEngine = ca.issue("*.glm-engine.inference.svc").serve(SGLANG);
    otherCaEngine = otherCa.issue(NAME).serve(SGLANG);
  }

  @AfterAll
  static void stop() {
    engine.close();
    wildcardEngine.close();
    otherCaEngine.close();
  }

  private ProbeOutcome probe(FakeEngine target, EngineTls settings) {
    EngineEndpoint endpoint =
        EngineEndpoint.of("https", "127.0.0.1", target.port(), Duration.ofSeconds(5))
            .withTls(Optional.ofNullable(settings));
    return new SglangProbe(http).probe(endpoint);
  }

  private static EngineTls trusting(PrivateCa authority, String serverName) {
    return EngineTls.of(authority.caPem, "Secret inference/engine-ca key ca.crt", serverName);
  }

  @Test
  void theCaBundleAndTheServerNameVerifyTheEngine() {
    assertThat(observed(probe(engine, trusting(ca, NAME))).poolTokens()).isEqualTo(2_040_000);
    assertThat(observed(probe(engine, trusting(ca, "glm-engine"))).poolTokens())
        .isEqualTo(2_040_000);
    // The name is sent as SNI too, on this JDK (17), although the probe connects to an IP address.
    assertThat(tls.requestedServerNames()).contains(NAME);
  }

  @Test
  void aWildcardCertificateCoversOneLabelOnly() {
    assertThat(
            observed(probe(wildcardEngine, trusting(ca, "pod-0.glm-engine.inference.svc")))
                .poolTokens())
        .isEqualTo(2_040_000);
    assertThat(failure(probe(wildcardEngine, trusting(ca, "a.pod-0.glm-engine.inference.svc"))))
        .contains(
            "TLS failure: the engine's certificate does not carry the name a.pod-0.glm-engine.inference.svc");
    assertThat(failure(probe(wildcardEngine, trusting(ca, "glm-engine.inference.svc"))))
        .contains("does not carry the name glm-engine.inference.svc");
  }

  @Test
  void withoutProbeTlsTheJvmTrustStoreRefusesThePrivateCa() {
    assertThat(failure(probe(engine, null)))
        .isEqualTo(
            "GET /server_info failed: TLS failure: the engine's certificate is"
                + " not issued by a CA the probe trusts (the JVM's default trust store); set probe.tls.caSecretRef or"
                + " probe.tls.caConfigMapRef to the CA bundle that issued it");
  }

  @Test
  void theRightCaWithoutAServerNameIsRefusedBecauseNoCertificateNamesThePodIp() {
    assertThat(failure(probe(engine, trusting(ca, null))))
        .isEqualTo(
            "GET /server_info failed: TLS failure: the"
                + " engine's certificate does not name 127.0.0.1, the address probed; set probe.tls.serverName to a DNS name"
                + " it carries");
  }

  @Test
  void aWrongServerNameIsRefused() {
    assertThat(failure(probe(engine, trusting(ca, "other-engine.inference.svc"))))
        .isEqualTo(
            "GET /server_info failed:"
                + " TLS failure: the engine's certificate does not carry the name other-engine.inference.svc"
                + " (probe.tls.serverName)");
  }

  @Test
  void aCertificateFromAnotherCaIsRefusedEvenForTheRightName() {
    assertThat(failure(probe(otherCaEngine, trusting(ca, NAME))))
        .contains(
            "TLS failure: the engine's certificate is not issued by a CA the probe trusts (the CA bundle in"
                + " Secret inference/engine-ca key ca.crt)");
    // A server name alone keeps the JVM's trust store, which knows neither private CA.
    assertThat(failure(probe(engine, EngineTls.of(null, null, NAME))))
        .contains("the JVM's default trust store");
  }

  @Test
  void aBundleThatIsNoCertificateFailsTheProbe() {
    assertThat(
            failure(
                probe(
                    engine,
                    EngineTls.of("not a certificate", "ConfigMap inference/ca key ca.crt", NAME))))
        .isEqualTo(
            "probe TLS: the CA bundle in ConfigMap inference/ca key ca.crt is not PEM certificates");
  }

  @Test
  void probeTlsChangesNothingForPlainHttp() throws Exception {
    try (FakeEngine plain = new FakeEngine().serve(SGLANG)) {
      EngineEndpoint endpoint =
          EngineEndpoint.of("http", "127.0.0.1", plain.port(), Duration.ofSeconds(5))
              .withTls(Optional.of(trusting(ca, NAME)));
      assertThat(observed(new SglangProbe(http).probe(endpoint)).poolTokens()).isEqualTo(2_040_000);
    }
  }
}

package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the operator keeps in its webhook Secret, on a fixed clock. */
class CertificatePlanTest {
  private static final List<String> NAMES =
      List.of(
          "kvguard-webhook.kvguard-system.svc", "kvguard-webhook.kvguard-system.svc.cluster.local");
  private static final Instant T0 = Instant.parse("2026-12-04T00:00:00Z");

  @Test
  void anEmptySecretGetsACaAndAServingCertificateForTheServiceNames() throws Exception {
    Map<String, String> data = CertificatePlan.next(Map.of(), NAMES, T0).orElseThrow();

    X509Certificate serving = leaf(data.get(CertificatePlan.TLS_CRT));
    assertThat(names(serving)).containsExactlyElementsOf(NAMES);
    serving.verify(bundle(data).get(0).getPublicKey());
    assertThat(bundle(data)).hasSize(1);
    assertThat(serving.getNotAfter().toInstant()).isAfter(T0.plus(Duration.ofDays(364)));
  }

  @Test
  void aCurrentSecretIsLeftAsItIs() {
    Map<String, String> data = CertificatePlan.next(Map.of(), NAMES, T0).orElseThrow();

    assertThat(CertificatePlan.next(data, NAMES, T0.plus(Duration.ofDays(200)))).isEmpty();
  }

  @Test
  void theServingCertificateIsRenewedByTheSameCaWhenAThirdOfItsLifeIsLeft() throws Exception {
    Map<String, String> data = CertificatePlan.next(Map.of(), NAMES, T0).orElseThrow();

    Map<String, String> renewed =
        CertificatePlan.next(data, NAMES, T0.plus(Duration.ofDays(250))).orElseThrow();

    assertThat(renewed.get(CertificatePlan.TLS_CRT))
        .isNotEqualTo(data.get(CertificatePlan.TLS_CRT));
    assertThat(renewed.get(CertificatePlan.CA_CRT))
        .as("the caBundle does not change")
        .isEqualTo(data.get(CertificatePlan.CA_CRT));
    leaf(renewed.get(CertificatePlan.TLS_CRT)).verify(bundle(data).get(0).getPublicKey());
  }

  @Test
  void aNewCaJoinsTheBundleAndSignsOnlyFromTheNextRenewalOn() throws Exception {
    Map<String, String> data = CertificatePlan.next(Map.of(), NAMES, T0).orElseThrow();
    // Serving renewed at 250-day intervals until the CA's last third (5 years: renewed after 1,217
    // days).
    Instant t = T0;
    for (int i = 0; i < 4; i++) {
      t = t.plus(Duration.ofDays(250));
      data = CertificatePlan.next(data, NAMES, t).orElse(data);
    }
    Instant caRenewal = T0.plus(Duration.ofDays(1250));

    Map<String, String> rotated = CertificatePlan.next(data, NAMES, caRenewal).orElseThrow();

    List<X509Certificate> bundle = bundle(rotated);
    assertThat(bundle).hasSize(2);
    assertThat(bundle.get(1)).isEqualTo(bundle(data).get(0));
    // The serving certificate falls due in the same round: the old CA, which the API server already
    // trusts, signs it.
    assertThat(rotated.get(CertificatePlan.TLS_CRT))
        .isNotEqualTo(data.get(CertificatePlan.TLS_CRT));
    leaf(rotated.get(CertificatePlan.TLS_CRT)).verify(bundle(data).get(0).getPublicKey());
    // At its own renewal the serving certificate is the new CA's; the old CA leaves the bundle once
    // expired.
    Map<String, String> later =
        CertificatePlan.next(rotated, NAMES, caRenewal.plus(Duration.ofDays(250))).orElseThrow();
    leaf(later.get(CertificatePlan.TLS_CRT)).verify(bundle.get(0).getPublicKey());
    Map<String, String> afterOldCa =
        CertificatePlan.next(later, NAMES, T0.plus(Duration.ofDays(5 * 365 + 1))).orElseThrow();
    assertThat(bundle(afterOldCa)).containsExactly(bundle.get(0));
  }

  @Test
  void aServingCertificateForOtherNamesOrNotFromTheBundleIsReissued() throws Exception {
    Map<String, String> data = CertificatePlan.next(Map.of(), NAMES, T0).orElseThrow();

    Map<String, String> renamed =
        CertificatePlan.next(data, List.of("other.kvguard-system.svc"), T0).orElseThrow();
    assertThat(names(leaf(renamed.get(CertificatePlan.TLS_CRT))))
        .containsExactly("other.kvguard-system.svc");

    CertificateIssuer.Issued stranger =
        CertificateIssuer.certificateAuthority("stranger", T0, Duration.ofDays(30));
    CertificateIssuer.Issued foreign =
        CertificateIssuer.servingCertificate(stranger, NAMES, T0, Duration.ofDays(30));
    Map<String, String> tampered = new java.util.HashMap<>(data);
    tampered.put(CertificatePlan.TLS_CRT, foreign.certificatePem());
    tampered.put(CertificatePlan.TLS_KEY, foreign.keyPem());
    Map<String, String> repaired = CertificatePlan.next(tampered, NAMES, T0).orElseThrow();
    leaf(repaired.get(CertificatePlan.TLS_CRT)).verify(bundle(data).get(0).getPublicKey());
  }

  private static List<String> names(X509Certificate certificate) throws Exception {
    return certificate.getSubjectAlternativeNames().stream().map(n -> (String) n.get(1)).toList();
  }

  private static X509Certificate leaf(String pem) throws Exception {
    return ServingCertificate.certificates(pem.getBytes(StandardCharsets.US_ASCII))[0];
  }

  private static List<X509Certificate> bundle(Map<String, String> data) throws Exception {
    return List.of(
        ServingCertificate.certificates(
            data.get(CertificatePlan.CA_CRT).getBytes(StandardCharsets.US_ASCII)));
  }
}

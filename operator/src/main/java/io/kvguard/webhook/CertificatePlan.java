package io.kvguard.webhook;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the operator keeps in its webhook Secret, decided from what the Secret holds and the clock
 * (pure but for the randomness of new keys). Keys: {@code tls.crt}, {@code tls.key} (the serving
 * pair), {@code ca.crt} (every CA the API server must trust: the current one first, then the
 * previous one until it expires; this is the caBundle) and {@code ca.key} (the current CA's key).
 *
 * <p>Each certificate is renewed when a third of its life is left: the serving certificate (a year)
 * by the current CA, so the caBundle does not change; the CA (five years) by a new CA that joins
 * the bundle beside the old one (which has a third of five years left, more than a serving
 * certificate's life). A serving certificate is only ever signed by a CA that was in the bundle
 * before that round: in the round that renews the CA, the old CA still signs, and the new one signs
 * from the next renewal on, months after every replica put it into the caBundle. There is no moment
 * at which the API server meets a certificate it does not trust.
 */
public final class CertificatePlan {
  public static final String TLS_CRT = "tls.crt";
  public static final String TLS_KEY = "tls.key";
  public static final String CA_CRT = "ca.crt";
  public static final String CA_KEY = "ca.key";
  public static final Duration CA_VALIDITY = Duration.ofDays(5 * 365);
  public static final Duration SERVING_VALIDITY = Duration.ofDays(365);

  private CertificatePlan() {}

  /** The Secret's new data, or empty when it holds what it should. */
  public static Optional<Map<String, String>> next(
      Map<String, String> current, List<String> dnsNames, Instant now) {
    Map<String, String> data = current == null ? Map.of() : current;
    Optional<CertificateIssuer.Issued> ca = read(data.get(CA_CRT), data.get(CA_KEY));
    if (ca.isEmpty()) {
      CertificateIssuer.Issued freshCa =
          CertificateIssuer.certificateAuthority("kvguard-webhook-ca", now, CA_VALIDITY);
      return Optional.of(
          data(
              freshCa,
              List.of(freshCa.certificate()),
              CertificateIssuer.servingCertificate(freshCa, dnsNames, now, SERVING_VALIDITY)));
    }
    List<X509Certificate> bundle = new ArrayList<>();
    for (X509Certificate trusted : bundle(data.get(CA_CRT))) {
      if (trusted.getNotAfter().toInstant().isAfter(now)) {
        bundle.add(trusted);
      }
    }
    CertificateIssuer.Issued signer = ca.get();
    // Serving certificates are signed by a CA that was already in the bundle before this round, so
    // the API server trusts them from the moment a replica serves them: in the round that renews
    // the CA, the old one still signs.
    CertificateIssuer.Issued servingSigner = signer;
    if (renewalDue(signer.certificate(), now)) {
      signer = CertificateIssuer.certificateAuthority("kvguard-webhook-ca", now, CA_VALIDITY);
      bundle.add(0, signer.certificate());
    }
    Optional<CertificateIssuer.Issued> serving = read(data.get(TLS_CRT), data.get(TLS_KEY));
    CertificateIssuer.Issued pair =
        serving
            .filter(
                s ->
                    !renewalDue(s.certificate(), now)
                        && s.certificate().getNotAfter().toInstant().isAfter(now)
                        && names(s.certificate()).containsAll(dnsNames)
                        && signedByOneOf(s.certificate(), bundle))
            .orElse(null);
    if (pair == null) {
      pair = CertificateIssuer.servingCertificate(servingSigner, dnsNames, now, SERVING_VALIDITY);
    }
    Map<String, String> next = data(signer, bundle, pair);
    return next.equals(data) ? Optional.empty() : Optional.of(next);
  }

  private static Map<String, String> data(
      CertificateIssuer.Issued ca, List<X509Certificate> bundle, CertificateIssuer.Issued serving) {
    Map<String, String> data = new LinkedHashMap<>();
    data.put(TLS_CRT, serving.certificatePem());
    data.put(TLS_KEY, serving.keyPem());
    StringBuilder pem = new StringBuilder(ca.certificatePem());
    for (X509Certificate other : bundle) {
      if (!other.equals(ca.certificate())) {
        pem.append(CertificateIssuer.pem(other));
      }
    }
    data.put(CA_CRT, pem.toString());
    data.put(CA_KEY, ca.keyPem());
    return data;
  }

  /** Renewed once a third of its life is left. */
  static boolean renewalDue(X509Certificate certificate, Instant now) {
    Instant from = certificate.getNotBefore().toInstant();
    Instant to = certificate.getNotAfter().toInstant();
    return now.isAfter(to.minus(Duration.between(from, to).dividedBy(3)));
  }

  private static Optional<CertificateIssuer.Issued> read(String certificatePem, String keyPem) {
    if (certificatePem == null || keyPem == null) {
      return Optional.empty();
    }
    try {
      X509Certificate certificate =
          ServingCertificate.certificates(certificatePem.getBytes(StandardCharsets.US_ASCII))[0];
      ServingCertificate.sslContext(
          new X509Certificate[] {certificate},
          ServingCertificate.privateKey(keyPem.getBytes(StandardCharsets.US_ASCII)));
      return Optional.of(new CertificateIssuer.Issued(CertificateIssuer.pem(certificate), keyPem));
    } catch (Exception e) {
      // Unreadable or not a pair: issued anew.
      return Optional.empty();
    }
  }

  private static List<X509Certificate> bundle(String pem) {
    try {
      return List.of(ServingCertificate.certificates(pem.getBytes(StandardCharsets.US_ASCII)));
    } catch (GeneralSecurityException | RuntimeException e) {
      return List.of();
    }
  }

  private static List<String> names(X509Certificate certificate) {
    List<String> names = new ArrayList<>();
    try {
      Collection<List<?>> alternatives = certificate.getSubjectAlternativeNames();
      if (alternatives != null) {
        alternatives.stream()
            .filter(n -> Integer.valueOf(2).equals(n.get(0)))
            .forEach(n -> names.add((String) n.get(1)));
      }
    } catch (java.security.cert.CertificateParsingException e) {
      return List.of();
    }
    return names;
  }

  private static boolean signedByOneOf(X509Certificate certificate, List<X509Certificate> cas) {
    for (X509Certificate ca : cas) {
      try {
        certificate.verify(ca.getPublicKey());
        return true;
      } catch (GeneralSecurityException e) {
        // Not this one.
      }
    }
    return false;
  }
}

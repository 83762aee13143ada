package io.kvguard.webhook;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Issues the webhook's certificates where cert-manager is not used: a CA and a serving certificate
 * for the webhook Service's DNS names, ECDSA P-256 (a handshake signs in well under a millisecond),
 * PEM encoded. Pure apart from the randomness of keys and serial numbers; the JDK's providers do
 * the cryptography.
 */
public final class CertificateIssuer {
  private static final SecureRandom RANDOM = new SecureRandom();

  private CertificateIssuer() {}

  /** A certificate and its key, both PEM. */
  public record Issued(String certificatePem, String keyPem) {
    public X509Certificate certificate() {
      try {
        return ServingCertificate.certificates(
            certificatePem.getBytes(java.nio.charset.StandardCharsets.US_ASCII))[0];
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(e);
      }
    }

    PrivateKey key() {
      try {
        return ServingCertificate.privateKey(
            keyPem.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  public static Issued certificateAuthority(
      String commonName, Instant notBefore, Duration validity) {
    try {
      KeyPair keys = newKeyPair();
      X500Name name = new X500Name("CN=" + commonName);
      X509v3CertificateBuilder builder = builder(name, name, keys, notBefore, validity);
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      builder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      builder.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          extensions.createSubjectKeyIdentifier(keys.getPublic()));
      return new Issued(
          pem(sign(builder, keys.getPrivate())),
          pem(new JcaPKCS8Generator(keys.getPrivate(), null)));
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot issue the webhook's CA", e);
    }
  }

  /**
   * A serving certificate for {@code dnsNames} (the first is also its common name), signed by
   * {@code ca}.
   */
  public static Issued servingCertificate(
      Issued ca, List<String> dnsNames, Instant notBefore, Duration validity) {
    try {
      KeyPair keys = newKeyPair();
      X509Certificate caCert = ca.certificate();
      X509v3CertificateBuilder builder =
          builder(
              X500Name.getInstance(caCert.getSubjectX500Principal().getEncoded()),
              new X500Name("CN=" + dnsNames.get(0)),
              keys,
              notBefore,
              validity);
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(
              dnsNames.stream()
                  .map(dns -> new GeneralName(GeneralName.dNSName, dns))
                  .toArray(GeneralName[]::new)));
      builder.addExtension(
          Extension.authorityKeyIdentifier, false, extensions.createAuthorityKeyIdentifier(caCert));
      return new Issued(
          pem(sign(builder, ca.key())), pem(new JcaPKCS8Generator(keys.getPrivate(), null)));
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot issue the webhook's serving certificate", e);
    }
  }

  private static X509v3CertificateBuilder builder(
      X500Name issuer, X500Name subject, KeyPair keys, Instant notBefore, Duration validity) {
    // Back-dated a little: an API server whose clock is behind must not see a certificate from the
    // future.
    Instant from = notBefore.minus(Duration.ofMinutes(5));
    return new JcaX509v3CertificateBuilder(
        issuer,
        new BigInteger(127, RANDOM).add(BigInteger.ONE),
        Date.from(from),
        Date.from(notBefore.plus(validity)),
        subject,
        keys.getPublic());
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
  }

  /** A certificate as PEM. */
  public static String pem(X509Certificate certificate) {
    try {
      return pem((Object) certificate);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String pem(Object object) throws IOException {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
      writer.writeObject(object);
    }
    return out.toString();
  }
}

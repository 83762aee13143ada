package io.kvguard.webhook;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Collection;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook's key pair, read from {@code tls.crt} and {@code tls.key} in a directory and read
 * again whenever either file's bytes change: a Secret volume (cert-manager's) is updated in place
 * by the kubelet, and the operator's own rotation rewrites the files. A pair that cannot be read
 * (half-written, key and certificate not matching) keeps the previous one in use; connections
 * accepted later get the new pair, open ones keep theirs.
 */
public final class ServingCertificate {
  private static final Logger LOG = LoggerFactory.getLogger(ServingCertificate.class);
  public static final String CERT_FILE = "tls.crt";
  public static final String KEY_FILE = "tls.key";

  private final Path dir;
  private byte[] loadedCert = new byte[0];
  private byte[] loadedKey = new byte[0];

  /** The last pair refused, so a pair that stays unusable is reported once, not every second. */
  private byte[] refusedCert = new byte[0];

  private byte[] refusedKey = new byte[0];
  private volatile SSLContext context;
  private volatile X509Certificate leaf;

  public ServingCertificate(Path dir) {
    this.dir = dir;
  }

  /** Reads the files again if they changed; true when a new pair is now in use. Never throws. */
  public synchronized boolean refresh() {
    byte[] cert;
    byte[] key;
    try {
      cert = Files.readAllBytes(dir.resolve(CERT_FILE));
      key = Files.readAllBytes(dir.resolve(KEY_FILE));
    } catch (IOException e) {
      if (context == null) {
        LOG.debug("webhook key pair not readable yet in {}: {}", dir, e.toString());
      }
      return false;
    }
    if (Arrays.equals(cert, loadedCert) && Arrays.equals(key, loadedKey)
        || Arrays.equals(cert, refusedCert) && Arrays.equals(key, refusedKey)) {
      return false;
    }
    try {
      X509Certificate[] chain = certificates(cert);
      SSLContext fresh = sslContext(chain, privateKey(key));
      loadedCert = cert;
      loadedKey = key;
      leaf = chain[0];
      context = fresh;
      LOG.info(
          "webhook serving certificate loaded subject={} notAfter={}",
          chain[0].getSubjectX500Principal(),
          chain[0].getNotAfter().toInstant());
      return true;
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      // Often a pair caught between the two files' updates: the next look reads it whole.
      refusedCert = cert;
      refusedKey = key;
      LOG.warn("webhook key pair in {} not usable, keeping the one in use: {}", dir, e.toString());
      return false;
    }
  }

  /** The TLS context of the pair in use, if one was ever read. */
  public Optional<SSLContext> context() {
    return Optional.ofNullable(context);
  }

  /** The certificate served now. */
  public Optional<X509Certificate> certificate() {
    return Optional.ofNullable(leaf);
  }

  static X509Certificate[] certificates(byte[] pem) throws GeneralSecurityException {
    Collection<? extends Certificate> all =
        CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
    if (all.isEmpty()) {
      throw new GeneralSecurityException("no certificate in " + CERT_FILE);
    }
    return all.stream().map(X509Certificate.class::cast).toArray(X509Certificate[]::new);
  }

  /**
   * PKCS#8 ("PRIVATE KEY"), PKCS#1 ("RSA PRIVATE KEY") or SEC1 ("EC PRIVATE KEY"): what
   * cert-manager writes.
   */
  static PrivateKey privateKey(byte[] pem) throws IOException {
    try (PEMParser parser =
        new PEMParser(new StringReader(new String(pem, StandardCharsets.US_ASCII)))) {
      Object read = parser.readObject();
      JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
      if (read instanceof PEMKeyPair pair) {
        return converter.getPrivateKey(pair.getPrivateKeyInfo());
      }
      if (read instanceof PrivateKeyInfo info) {
        return converter.getPrivateKey(info);
      }
      throw new IOException("no unencrypted private key in " + KEY_FILE);
    }
  }

  static SSLContext sslContext(X509Certificate[] chain, PrivateKey key)
      throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    char[] password = new char[0];
    store.setKeyEntry("webhook", key, password, chain);
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(store, password);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), null, null);
    // A key that does not belong to the certificate fails here, not in every client's handshake.
    String algorithm =
        "EC".equals(key.getAlgorithm()) ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
    byte[] nonce = "kvguard-webhook-key-check".getBytes(StandardCharsets.US_ASCII);
    java.security.Signature signer = java.security.Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(nonce);
    byte[] signature = signer.sign();
    java.security.Signature verifier = java.security.Signature.getInstance(algorithm);
    verifier.initVerify(chain[0].getPublicKey());
    verifier.update(nonce);
    if (!verifier.verify(signature)) {
      throw new GeneralSecurityException(
          "the key in " + KEY_FILE + " does not belong to the certificate in " + CERT_FILE);
    }
    return context;
  }
}

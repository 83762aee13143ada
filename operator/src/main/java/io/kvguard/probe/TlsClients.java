package io.kvguard.probe;

import java.io.ByteArrayInputStream;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * One HttpClient per TLS setting (CA bundle, server name), built once and kept while it is used.
 * Keyed by a SHA-256 of the bundle's content, so a bundle that changes in its Secret gets a new
 * client at the next probe, and ModelDeployments sharing a CA share the client. (The JDK's
 * HttpClient takes its trust and SSL parameters per client, not per request.)
 */
final class TlsClients {
  /**
   * A client nobody used this long is let go (the JDK stops its selector thread once it is
   * unreachable).
   */
  private static final Duration IDLE = Duration.ofMinutes(10);

  private record Key(String caSha256, String serverName) {}

  private static final class Entry {
    final HttpClient client;
    volatile Instant usedAt;

    Entry(HttpClient client, Instant usedAt) {
      this.client = client;
      this.usedAt = usedAt;
    }
  }

  private final Map<Key, Entry> clients = new ConcurrentHashMap<>();
  private final Clock clock;

  TlsClients(Clock clock) {
    this.clock = clock;
  }

  HttpClient forTls(EngineTls tls) throws ProbeException {
    Instant now = clock.instant();
    clients.values().removeIf(entry -> entry.usedAt.plus(IDLE).isBefore(now));
    Key key = new Key(tls.caBundlePem() == null ? "" : sha256(tls.caBundlePem()), tls.serverName());
    Entry entry = clients.get(key);
    if (entry == null) {
      entry = new Entry(build(tls), now);
      Entry raced = clients.putIfAbsent(key, entry);
      entry = raced == null ? entry : raced;
    }
    entry.usedAt = now;
    return entry.client;
  }

  private static HttpClient build(EngineTls tls) throws ProbeException {
    X509TrustManager path = pathTrust(tls);
    TrustManager trust =
        tls.serverName() == null ? path : new ServerNameTrustManager(path, tls.serverName());
    try {
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, new TrustManager[] {trust}, null);
      SSLParameters parameters = context.getDefaultSSLParameters();
      if (tls.serverName() != null) {
        // SNI, so an engine serving several certificates picks the one for this name. The JDK 17
        // HttpClient sends it to an IP address as given here; later JDKs send no SNI to an IP
        // address (AbstractAsyncSSLConnection. formSNIServerNames). Verification does not depend on
        // it: ServerNameTrustManager checks the name.
        parameters.setServerNames(List.of(new SNIHostName(tls.serverName())));
      }
      return EngineHttp.newHttpClientBuilder()
          .sslContext(context)
          .sslParameters(parameters)
          .build();
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new ProbeException(
          "probe TLS: cannot set up TLS (" + e.getClass().getSimpleName() + ")");
    }
  }

  /** The PKIX trust manager for the bundle, or the JVM's default one. */
  private static X509TrustManager pathTrust(EngineTls tls) throws ProbeException {
    try {
      KeyStore anchors = null;
      if (tls.caBundlePem() != null) {
        anchors = KeyStore.getInstance(KeyStore.getDefaultType());
        anchors.load(null, null);
        int i = 0;
        for (X509Certificate ca : certificates(tls)) {
          anchors.setCertificateEntry("ca-" + i++, ca);
        }
      }
      TrustManagerFactory factory =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      factory.init(anchors);
      for (TrustManager manager : factory.getTrustManagers()) {
        if (manager instanceof X509TrustManager x509) {
          return x509;
        }
      }
      throw new ProbeException("probe TLS: the JVM offers no X.509 trust manager");
    } catch (GeneralSecurityException | java.io.IOException e) {
      throw new ProbeException(
          "probe TLS: cannot use the CA bundle in "
              + tls.caSource()
              + " ("
              + e.getClass().getSimpleName()
              + ")");
    }
  }

  private static List<X509Certificate> certificates(EngineTls tls) throws ProbeException {
    Collection<? extends Certificate> parsed;
    try {
      parsed =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(
                  new ByteArrayInputStream(tls.caBundlePem().getBytes(StandardCharsets.US_ASCII)));
    } catch (CertificateException e) {
      throw new ProbeException(
          "probe TLS: the CA bundle in " + tls.caSource() + " is not PEM certificates");
    }
    List<X509Certificate> cas =
        parsed.stream()
            .filter(X509Certificate.class::isInstance)
            .map(X509Certificate.class::cast)
            .toList();
    if (cas.isEmpty()) {
      throw new ProbeException(
          "probe TLS: the CA bundle in " + tls.caSource() + " holds no PEM certificate");
    }
    return cas;
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}

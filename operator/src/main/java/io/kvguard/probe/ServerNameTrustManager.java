package io.kvguard.probe;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Verifies an engine's certificate against a DNS name instead of the address the probe connected
 * to.
 *
 * <p>Why this class: a probe must connect to the pod's IP (each pod is judged on its own; a Service
 * name would reach any of them), but no certificate names a pod IP. The JDK's HttpClient verifies
 * the certificate against the host of the request URI: it sets the endpoint identification
 * algorithm "HTTPS" on every connection ({@code
 * jdk.internal.net.http.AbstractAsyncSSLConnection.createSSLParameters}), and the only way around
 * it it offers is the JVM-wide {@code jdk.internal.httpclient.disableHostnameVerification}
 * property, which turns the check off for every connection and is no option for a safety device.
 * The JDK leaves endpoint identification to the trust manager: an {@link X509ExtendedTrustManager}
 * is used as it is (a plain X509TrustManager gets wrapped in one that checks the URI host). So this
 * one does both halves itself, each with a public API:
 *
 * <ol>
 *   <li>the certificate path, through the PKIX trust manager built from the CA bundle (its
 *       two-argument {@code checkServerTrusted}: chain to a trusted CA, validity, key usage and
 *       algorithm constraints, no host check);
 *   <li>the name, through {@link DnsNames} against {@code serverName}.
 * </ol>
 *
 * Connecting to the IP while verifying a name is what {@code curl --connect-to} and Go's {@code
 * tls.Config.ServerName} do.
 */
final class ServerNameTrustManager extends X509ExtendedTrustManager {
  private final X509TrustManager path;
  private final String serverName;

  ServerNameTrustManager(X509TrustManager path, String serverName) {
    this.path = path;
    this.serverName = serverName;
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    path.checkServerTrusted(chain, authType);
    DnsNames.check(chain[0], serverName);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkServerTrusted(chain, authType);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkServerTrusted(chain, authType);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    throw new CertificateException("kvguard's probes verify servers only");
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    checkClientTrusted(chain, authType);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    checkClientTrusted(chain, authType);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return path.getAcceptedIssuers();
  }
}

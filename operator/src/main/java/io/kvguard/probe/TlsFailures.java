package io.kvguard.probe;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import javax.net.ssl.SSLException;

/**
 * What a failed TLS handshake means, in words that say what to change. Built from the exception
 * types only (and the JDK's fixed wording of its host check), never from the certificate: nothing
 * the engine sent reaches a message.
 */
final class TlsFailures {
  private TlsFailures() {}

  static String describe(SSLException failure, EngineEndpoint endpoint) {
    EngineTls tls = endpoint.tls().orElse(EngineTls.of(null, null, null));
    if (find(failure, DnsNames.NameMismatchException.class) != null) {
      return "TLS failure: the engine's certificate does not carry the name "
          + tls.serverName()
          + " (probe.tls.serverName)";
    }
    if (find(failure, CertificateExpiredException.class) != null
        || find(failure, CertificateNotYetValidException.class) != null) {
      return "TLS failure: the engine's certificate has expired or is not valid yet";
    }
    if (find(failure, CertPathBuilderException.class) != null
        || find(failure, CertPathValidatorException.class) != null) {
      return "TLS failure: the engine's certificate is not issued by a CA the probe trusts ("
          + tls.trusted()
          + "); set probe.tls.caSecretRef or probe.tls.caConfigMapRef to the CA bundle that issued it";
    }
    CertificateException rejected = find(failure, CertificateException.class);
    if (rejected != null
        && rejected.getMessage() != null
        && rejected.getMessage().startsWith("No ")
        && rejected.getMessage().contains("matching")) {
      // The JDK's own host check (sun.security.util.HostnameChecker): the certificate does not name
      // the address.
      return "TLS failure: the engine's certificate does not name "
          + endpoint.baseUri().getHost()
          + ", the address probed; set probe.tls.serverName to a DNS name it carries";
    }
    if (rejected != null) {
      return "TLS failure: the engine's certificate was rejected ("
          + rejected.getClass().getSimpleName()
          + ")";
    }
    return "TLS failure (" + failure.getClass().getSimpleName() + ")";
  }

  private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }
}

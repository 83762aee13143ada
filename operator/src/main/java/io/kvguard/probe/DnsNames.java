package io.kvguard.probe;

import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * Whether a certificate carries a DNS name, as RFC 6125 section 6.4 has a client check a DNS-ID:
 * the dNSName subjectAltNames only (no fallback to the subject's common name, which RFC 6125
 * deprecates and browsers and Go no longer use), case-insensitive, and a wildcard only as the whole
 * left-most label of a name of three labels or more ("*.inference.svc" matches
 * "engine.inference.svc", not "a.engine.inference.svc" nor "inference.svc"). Stricter than the
 * JDK's own check, which also accepts partial wildcards such as "f*.example.com".
 */
final class DnsNames {
  /** subjectAltName type of a dNSName (RFC 5280 GeneralName, as X509Certificate numbers it). */
  private static final int DNS_NAME = 2;

  private DnsNames() {}

  /**
   * Raised when the certificate does not carry the name; its message holds no certificate content.
   */
  static final class NameMismatchException extends CertificateException {
    NameMismatchException(String serverName) {
      super("the certificate carries no dNSName matching " + serverName);
    }
  }

  static void check(X509Certificate certificate, String serverName) throws CertificateException {
    Collection<List<?>> names;
    try {
      names = certificate.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      throw new NameMismatchException(serverName);
    }
    if (names != null) {
      for (List<?> name : names) {
        if (name.size() >= 2
            && Integer.valueOf(DNS_NAME).equals(name.get(0))
            && name.get(1) instanceof String dns
            && matches(dns, serverName)) {
          return;
        }
      }
    }
    throw new NameMismatchException(serverName);
  }

  static boolean matches(String pattern, String serverName) {
    String p = withoutRootDot(pattern.toLowerCase(Locale.ROOT));
    String name = withoutRootDot(serverName.toLowerCase(Locale.ROOT));
    if (p.isEmpty() || name.isEmpty()) {
      return false;
    }
    if (!p.startsWith("*.")) {
      return !p.contains("*") && p.equals(name);
    }
    String parent = p.substring(2);
    if (parent.contains("*") || parent.split("\\.").length < 2) {
      return false;
    }
    int dot = name.indexOf('.');
    return dot > 0 && name.substring(dot + 1).equals(parent);
  }

  private static String withoutRootDot(String name) {
    return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
  }
}

package io.kvguard.probe;

/**
 * How a probe verifies an engine that speaks https.
 *
 * @param caBundlePem PEM certificates to trust instead of the JVM's default trust store; null: the
 *     JVM's
 * @param caSource where the bundle came from, for messages (e.g. "Secret inference/engine-ca key
 *     ca.crt")
 * @param serverName the DNS name the certificate must carry instead of the address probed; null:
 *     that address
 */
public record EngineTls(String caBundlePem, String caSource, String serverName) {

  public static EngineTls of(String caBundlePem, String caSource, String serverName) {
    return new EngineTls(
        caBundlePem, caSource, serverName == null || serverName.isBlank() ? null : serverName);
  }

  /** Whom the probe trusts, in words. */
  String trusted() {
    return caBundlePem == null ? "the JVM's default trust store" : "the CA bundle in " + caSource;
  }

  @Override
  public String toString() {
    // A record's default toString would print the whole bundle.
    return "EngineTls["
        + trusted()
        + (serverName == null ? "" : ", serverName=" + serverName)
        + "]";
  }
}

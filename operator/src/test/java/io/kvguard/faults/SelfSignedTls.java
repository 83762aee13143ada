package io.kvguard.faults;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocketFactory;

/** A TLS server socket factory with a fresh self-signed certificate, made by the JDK's keytool. */
final class SelfSignedTls {
  private static final char[] PASSWORD = "kvguard-test".toCharArray();

  private SelfSignedTls() {}

  static SSLServerSocketFactory serverSockets()
      throws IOException, GeneralSecurityException, InterruptedException {
    Path dir = Files.createTempDirectory("kvguard-tls");
    Path store = dir.resolve("engine.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "engine",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=127.0.0.1",
                "-ext",
                "SAN=IP:127.0.0.1",
                "-validity",
                "1",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                new String(PASSWORD),
                "-keypass",
                new String(PASSWORD))
            .redirectErrorStream(true)
            .start();
    if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
      throw new IOException(
          "keytool failed: " + new String(keytool.getInputStream().readAllBytes()));
    }
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keys.load(in, PASSWORD);
    }
    KeyManagerFactory managers =
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    managers.init(keys, PASSWORD);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(managers.getKeyManagers(), null, null);
    Files.delete(store);
    Files.delete(dir);
    return context.getServerSocketFactory();
  }
}

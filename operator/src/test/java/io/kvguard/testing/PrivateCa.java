package io.kvguard.testing;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import io.kvguard.testkit.FakeEngine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIMatcher;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.StandardConstants;

/**
 * A private certificate authority made for one test by the JDK's keytool, and engine certificates
 * it issues: what cert-manager or a mesh CA gives an inference engine. No certificate names an IP
 * address, as none a real CA issues names a pod IP.
 */
public final class PrivateCa {
  private static final String PASSWORD = "kvguard-test";
  private final Path dir;

  /** The CA certificate, PEM: what a Secret's or ConfigMap's ca.crt holds. */
  public final String caPem;

  private int issued;

  private PrivateCa(Path dir, String caPem) {
    this.dir = dir;
    this.caPem = caPem;
  }

  public static PrivateCa create(String commonName) {
    try {
      Path dir = Files.createTempDirectory("kvguard-ca");
      keytool(
          dir,
          "-genkeypair",
          "-alias",
          "ca",
          "-keyalg",
          "EC",
          "-groupname",
          "secp256r1",
          "-dname",
          "CN=" + commonName,
          "-ext",
          "bc:c",
          "-ext",
          "KU=keyCertSign,cRLSign",
          "-validity",
          "2",
          "-storetype",
          "PKCS12",
          "-keystore",
          "ca.p12",
          "-storepass",
          PASSWORD,
          "-keypass",
          PASSWORD);
      keytool(
          dir,
          "-exportcert",
          "-rfc",
          "-alias",
          "ca",
          "-keystore",
          "ca.p12",
          "-storepass",
          PASSWORD,
          "-file",
          "ca.pem");
      return new PrivateCa(dir, Files.readString(dir.resolve("ca.pem")));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A server certificate for these DNS names, signed by this CA, and the TLS setup of an engine
   * serving it.
   */
  public Engine issue(String... dnsNames) {
    try {
      String alias = "engine" + issued++;
      String store = alias + ".p12";
      keytool(
          dir,
          "-genkeypair",
          "-alias",
          alias,
          "-keyalg",
          "EC",
          "-groupname",
          "secp256r1",
          "-dname",
          "CN=" + dnsNames[0],
          "-validity",
          "1",
          "-storetype",
          "PKCS12",
          "-keystore",
          store,
          "-storepass",
          PASSWORD,
          "-keypass",
          PASSWORD);
      keytool(
          dir,
          "-certreq",
          "-alias",
          alias,
          "-keystore",
          store,
          "-storepass",
          PASSWORD,
          "-file",
          alias + ".csr");
      List<String> sans = new ArrayList<>();
      for (String name : dnsNames) {
        sans.add("dns:" + name);
      }
      keytool(
          dir,
          "-gencert",
          "-rfc",
          "-alias",
          "ca",
          "-keystore",
          "ca.p12",
          "-storepass",
          PASSWORD,
          "-infile",
          alias + ".csr",
          "-outfile",
          alias + ".pem",
          "-validity",
          "1",
          "-ext",
          "san=" + String.join(",", sans),
          "-ext",
          "KU=digitalSignature",
          "-ext",
          "EKU=serverAuth");
      keytool(
          dir,
          "-importcert",
          "-noprompt",
          "-alias",
          "ca",
          "-file",
          "ca.pem",
          "-keystore",
          store,
          "-storepass",
          PASSWORD);
      keytool(
          dir,
          "-importcert",
          "-alias",
          alias,
          "-file",
          alias + ".pem",
          "-keystore",
          store,
          "-storepass",
          PASSWORD);
      KeyStore keys = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(dir.resolve(store))) {
        keys.load(in, PASSWORD.toCharArray());
      }
      keys.deleteEntry("ca");
      KeyManagerFactory managers =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      managers.init(keys, PASSWORD.toCharArray());
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(managers.getKeyManagers(), null, null);
      return new Engine(context);
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An engine's TLS side; records the server names (SNI) clients asked for. */
  public static final class Engine extends HttpsConfigurator {
    private final List<String> requestedServerNames = new CopyOnWriteArrayList<>();

    Engine(SSLContext context) {
      super(context);
    }

    @Override
    public void configure(HttpsParameters params) {
      SSLParameters parameters = getSSLContext().getDefaultSSLParameters();
      parameters.setSNIMatchers(
          List.of(
              new SNIMatcher(StandardConstants.SNI_HOST_NAME) {
                @Override
                public boolean matches(SNIServerName name) {
                  requestedServerNames.add(((SNIHostName) name).getAsciiName());
                  return true;
                }
              }));
      params.setSSLParameters(parameters);
    }

    public List<String> requestedServerNames() {
      return List.copyOf(requestedServerNames);
    }

    public FakeEngine serve(java.util.Map<String, FakeEngine.Answer> answers) {
      try {
        return new FakeEngine(this).serve(answers);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static void keytool(Path dir, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    // keytool is a JVM of its own per call: start it light (no C2, serial GC) to keep a test run
    // short.
    command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    try {
      String output = new String(process.getInputStream().readAllBytes());
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("keytool interrupted", e);
    }
  }
}

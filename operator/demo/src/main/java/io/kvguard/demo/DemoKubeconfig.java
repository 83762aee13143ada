package io.kvguard.demo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A kubeconfig for the demo's API server: plain HTTP on loopback, no credentials (the server checks
 * none).
 */
final class DemoKubeconfig {
  private DemoKubeconfig() {}

  static String content(String serverUrl, String namespace) {
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: kvguard-demo
          cluster:
            server: %s
        users:
        - name: kvguard-demo
          user: {}
        contexts:
        - name: kvguard-demo
          context:
            cluster: kvguard-demo
            user: kvguard-demo
            namespace: %s
        current-context: kvguard-demo
        """
        .formatted(serverUrl, namespace);
  }

  static Path write(String serverUrl, String namespace) throws IOException {
    Path file;
    try {
      file =
          Files.createTempFile(
              "kvguard-demo-",
              ".kubeconfig",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException e) {
      file = Files.createTempFile("kvguard-demo-", ".kubeconfig");
    }
    Files.writeString(file, content(serverUrl, namespace));
    return file;
  }
}

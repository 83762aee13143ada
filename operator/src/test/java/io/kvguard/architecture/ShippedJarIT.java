package io.kvguard.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * The jar the image ships (operator/target/kvguard-operator.jar, built in package, before this tier
 * runs) holds the operator and its dependencies, and nothing that only tests, the demo or the
 * benchmark use: no mock API server that a compromised pod could start, no fake engines, no
 * benchmark harness.
 */
class ShippedJarIT {
  private static final Path JAR = Path.of("target/kvguard-operator.jar");

  @Test
  void theShippedJarRunsTheOperatorAndCarriesNoTestCode() throws IOException {
    assertThat(JAR).as("built by package, before integration-test").exists();
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertThat(jar.getManifest().getMainAttributes().getValue("Main-Class"))
          .isEqualTo("io.kvguard.OperatorMain");
      List<String> names = jar.stream().map(ZipEntry::getName).toList();
      assertThat(names)
          .contains(
              "io/kvguard/OperatorMain.class",
              "io/kvguard/cli/CheckCommand.class",
              "META-INF/fabric8/modeldeployments.kvguard.io-v1.yml");
      assertThat(names)
          .noneMatch(
              name ->
                  name.startsWith("io/fabric8/kubernetes/client/server/mock/")
                      || name.startsWith("io/fabric8/mockwebserver/")
                      || name.startsWith("okhttp3/mockwebserver/")
                      || name.startsWith("io/kvguard/testkit/")
                      || name.startsWith("io/kvguard/demo/")
                      || name.startsWith("io/kvguard/bench/")
                      || name.startsWith("org/junit/"));
    }
  }
}

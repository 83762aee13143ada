package io.kvguard.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The class-data-sharing archive the build ships beside the operator's jar (execution
 * class-data-sharing-archive, {@link ArchiveTraining}) is valid for {@code java -jar} on the path
 * the README gives, and holds the classes of the first passes (probing an engine, writing a gate,
 * the pod cache's warm-up, the metrics server), not only those of the start up to the first LIST:
 * the archive trained on the start alone left the first probe 2.8–3.7 s behind the contract floor's
 * (docs/benchmarks.md, "Start-up").
 */
class ArchiveTrainingIT {
  // The bench module's tests run in operator/ (its pom's workingDirectory).
  private static final Path JAR = Path.of("target/kvguard-operator.jar");
  private static final Path ARCHIVE = Path.of("target/kvguard-operator.jsa");

  @Test
  void theShippedArchiveIsValidForTheJarAndHoldsTheFirstPassesClasses() throws Exception {
    assumeFalse(
        Boolean.getBoolean("kvguard.cds.skip"), "built with -Dkvguard.cds.skip=true: no archive");
    assertThat(ARCHIVE).as("the build wrote the archive").isNotEmptyFile();
    List<String> printed = printArchive();
    assertThat(printed).as("the JVM maps it for this jar").contains("archive is valid");
    String classes = String.join("\n", printed);
    for (String loadedByAPass :
        List.of(
            "io.kvguard.reconciler.ModelDeploymentReconciler",
            "io.kvguard.probe.SglangProbe",
            "io.kvguard.gate.GateWriter",
            "io.kvguard.PodCacheWarmUp",
            "io.kvguard.MetricsServer")) {
      assertThat(classes)
          .as("the archive holds %s", loadedByAPass)
          .contains(" " + loadedByAPass + " ");
    }
  }

  /** What {@code -XX:+PrintSharedArchiveAndExit} says of the archive for the jar. */
  private static List<String> printArchive() throws IOException, InterruptedException {
    Process java =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:SharedArchiveFile=" + ARCHIVE,
                "-XX:+PrintSharedArchiveAndExit",
                "-jar",
                JAR.toString())
            .redirectErrorStream(true)
            .start();
    byte[] out = java.getInputStream().readAllBytes();
    assertThat(java.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new String(out, StandardCharsets.UTF_8).lines().map(String::strip).toList();
  }
}

package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Building the image needs a registry and a daemon, which CI does not have; so this checks that the
 * Dockerfile, the Maven build and the chart agree: the jar it copies is the one the build makes, it
 * runs as the user the chart enforces, and the chart's default tag is the project's version.
 */
class DockerfileTest {
  private static List<String> instructions;
  private static String pom;

  @BeforeAll
  static void read() throws IOException {
    // One entry per instruction, continuation lines (ending in a backslash) joined.
    String joined =
        String.join(
                "\n",
                Files.readAllLines(Path.of("Dockerfile")).stream()
                    .filter(l -> !l.isBlank() && !l.stripLeading().startsWith("#"))
                    .toList())
            .replaceAll("\\s*\\\\\n\\s*", " ");
    instructions = List.of(joined.split("\n"));
    pom = Files.readString(Path.of("pom.xml"));
  }

  private static String instruction(String keyword) {
    List<String> found = instructions.stream().filter(l -> l.startsWith(keyword + " ")).toList();
    assertThat(found).as("exactly one %s", keyword).hasSize(1);
    return found.get(0).substring(keyword.length() + 1).strip();
  }

  @Test
  void runsTheShadedJarTheBuildProducesWithJava17OrLater() throws IOException {
    assertThat(pom)
        .contains("<finalName>kvguard-operator</finalName>")
        .contains("<mainClass>io.kvguard.OperatorMain</mainClass>");
    assertThat(instruction("COPY"))
        .contains("target/kvguard-operator.jar /opt/kvguard/kvguard-operator.jar");
    assertThat(instruction("ENTRYPOINT"))
        .isEqualTo(
            "[\"java\", \"-XX:SharedArchiveFile=/opt/kvguard/kvguard-operator.jsa\","
                + " \"-Djava.io.tmpdir=/tmp\", \"-jar\", \"/opt/kvguard/kvguard-operator.jar\"]");
    Matcher base = Pattern.compile("^eclipse-temurin:(\\d+)-jre.*$").matcher(instruction("FROM"));
    assertThat(base.matches()).as(instruction("FROM")).isTrue();
    assertThat(Integer.parseInt(base.group(1))).isGreaterThanOrEqualTo(17);
    assertThat(Files.readString(Path.of(".dockerignore"))).contains("!target/kvguard-operator.jar");
  }

  /**
   * The class-data-sharing archive (docs/benchmarks.md, "Start-up"): the image's command reads the
   * archive the image's build step writes, for the jar it runs, trained as the Maven build trains
   * the one it writes beside its jar for {@code java -jar} (ArchiveTraining, from the benchmark's
   * jar, which the image's context lets in for that step only); the chart runs the image's command
   * as it is. ArchiveTrainingIT (operator/bench) checks the archive the build writes.
   */
  @Test
  void theImageAndTheBuildUseTheClassDataSharingArchiveTheyWrite() throws IOException {
    String archive = "/opt/kvguard/kvguard-operator.jsa";
    String training = "io.kvguard.bench.ArchiveTraining";
    assertThat(instruction("ENTRYPOINT"))
        .contains("\"-XX:SharedArchiveFile=" + archive + "\"")
        .contains("\"-jar\", \"/opt/kvguard/kvguard-operator.jar\"");
    assertThat(instruction("RUN"))
        .contains(
            "--mount=type=bind,source=bench/target/kvguard-bench.jar,target=/tmp/kvguard-bench.jar")
        .contains("-cp /tmp/kvguard-bench.jar " + training)
        .contains(training + " /opt/kvguard/kvguard-operator.jar " + archive);
    assertThat(instructions.indexOf("RUN " + instruction("RUN")))
        .as("the archive is made after the jar is copied and before the user changes")
        .isBetween(
            instructions.indexOf("COPY " + instruction("COPY")),
            instructions.indexOf("USER " + instruction("USER")));
    assertThat(instructions.indexOf("ENV " + instruction("ENV")))
        .as("the training runs with the image's JVM options")
        .isLessThan(instructions.indexOf("RUN " + instruction("RUN")));
    assertThat(Files.readString(Path.of(".dockerignore")))
        .contains("!bench/target/kvguard-bench.jar");
    String benchPom = Files.readString(Path.of("bench/pom.xml"));
    assertThat(benchPom)
        .contains("<argument>" + training + "</argument>")
        .contains("<argument>${project.basedir}/../target/kvguard-operator.jar</argument>")
        .contains("<argument>${project.basedir}/../target/kvguard-operator.jsa</argument>");
    Deployment deployment = RenderedChart.render("").one(Deployment.class);
    var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getCommand()).as("the chart runs the image's command").isNullOrEmpty();
    assertThat(container.getArgs()).isNullOrEmpty();
    JsonNode values =
        new YAMLMapper().readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
    assertThat(values.get("jvmOptions").asText()).doesNotContain("SharedArchiveFile");
  }

  @Test
  void runsAsTheNumericNonRootUserTheChartEnforces() throws IOException {
    String user = instruction("USER");
    assertThat(user).matches("\\d+:\\d+");
    int uid = Integer.parseInt(user.split(":")[0]);
    assertThat(uid).isPositive();
    JsonNode values =
        new YAMLMapper().readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
    assertThat(values.get("podSecurityContext").get("runAsUser").asInt()).isEqualTo(uid);
    assertThat(values.get("securityContext").get("runAsUser").asInt()).isEqualTo(uid);
  }

  @Test
  void jvmOptionsAndPortMatchTheChart() throws IOException {
    String env = instruction("ENV");
    assertThat(env).contains("-XX:+ExitOnOutOfMemoryError").contains("-XX:MaxRAMPercentage=50");
    JsonNode values =
        new YAMLMapper().readTree(RenderedChart.CHART.resolve("values.yaml").toFile());
    assertThat(env).contains("JAVA_TOOL_OPTIONS=\"" + values.get("jvmOptions").asText() + "\"");
    // The benchmarks run the operator's JVM with these same options: BenchOptionsTest
    // (operator/bench) checks it.
    assertThat(instruction("EXPOSE"))
        .isEqualTo(
            values.get("metrics").get("port").asText()
                + " "
                + values.get("healthProbes").get("port").asText());
    assertThat(env).contains("KVGUARD_METRICS_PORT=" + values.get("metrics").get("port").asText());
    assertThat(env)
        .contains("KVGUARD_HEALTH_PORT=" + values.get("healthProbes").get("port").asText());
  }

  @Test
  void theChartsDefaultTagIsTheProjectVersion() throws IOException {
    Matcher version =
        Pattern.compile("<artifactId>kvguard-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(pom);
    assertThat(version.find()).isTrue();
    JsonNode chart = new YAMLMapper().readTree(RenderedChart.CHART.resolve("Chart.yaml").toFile());
    assertThat(chart.get("appVersion").asText())
        .isEqualTo(version.group(1).replace("-SNAPSHOT", ""));
    Deployment deployment = RenderedChart.render("").one(Deployment.class);
    assertThat(deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .endsWith(":" + chart.get("appVersion").asText());
  }
}

package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check --model-deployment}: which files and flag combinations it refuses, and what it says
 * (exit 2).
 */
class CheckModelDeploymentTest {
  /**
   * The documented example: a LeaderWorkerSet and a ModelDeployment with roles prefill and decode.
   */
  private static final String EXAMPLE = "../docs/examples/sglang-prefill-decode-lws.yaml";

  @TempDir Path dir;

  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int check(String... args) {
    return new CheckCommand(EngineProbes.standard(EngineHttp.createDefault()))
        .run(
            args,
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private void assertUsageError(String message, String... args) {
    err.reset();
    assertThat(check(args)).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("kvguard check: " + message);
  }

  @Test
  void aFileWithSeveralRolesNeedsOneNamed() {
    assertUsageError(
        "--model-deployment " + EXAMPLE + " has roles prefill, decode: name one with --role",
        "--model-deployment",
        EXAMPLE,
        "--url",
        "http://h:1");
    assertUsageError(
        "--role router is not a role of " + EXAMPLE + " (prefill, decode)",
        "--model-deployment",
        EXAMPLE,
        "--role",
        "router",
        "--url",
        "http://h:1");
  }

  @Test
  void whatTheSpecSaysCannotAlsoBeGivenAsAFlag() {
    for (String[] flag :
        new String[][] {
          {"--engine", "sglang"},
          {"--context-window", "1"},
          {"--min-pool-ratio", "2"},
          {"--allow-engine-context-above-pool"}
        }) {
      String[] args = new String[flag.length + 6];
      System.arraycopy(
          new String[] {"--model-deployment", EXAMPLE, "--role", "prefill", "--url", "http://h:1"},
          0,
          args,
          0,
          6);
      System.arraycopy(flag, 0, args, 6, flag.length);
      assertUsageError(
          flag[0] + " cannot be combined with --model-deployment (the spec says it)", args);
    }
    assertUsageError(
        "--role needs --model-deployment",
        "--engine",
        "sglang",
        "--context-window",
        "1",
        "--url",
        "http://h:1",
        "--role",
        "prefill");
  }

  @Test
  void aSpecTheOperatorCannotApplyIsRefusedWithTheOperatorsWords() throws IOException {
    Path file =
        GlmModelDeployment.write(
            dir.resolve("md.yaml"),
            "inference",
            """
            roles:
              - name: prefill
                selector: {matchExpressions: [{key: role, operator: in, values: [prefill]}]}
                engine: sglang
                port: http
            """);

    assertUsageError(
        "--model-deployment "
            + file
            + ": kvguard cannot apply this spec: role prefill: matchExpression role"
            + " has unknown operator in",
        "--model-deployment",
        file.toString(),
        "--url",
        "http://h:1");
  }

  @Test
  void aFileWithoutExactlyOneModelDeploymentIsRefused() throws IOException {
    Path none = dir.resolve("none.yaml");
    Files.writeString(none, "apiVersion: v1\nkind: Service\nmetadata: {name: glm}\n");
    Path missing = dir.resolve("missing.yaml");

    assertUsageError(
        "--model-deployment " + none + " holds 0 ModelDeployments, expected one",
        "--model-deployment",
        none.toString(),
        "--url",
        "http://h:1");
    assertUsageError(
        "--model-deployment " + missing + " cannot be read as YAML",
        "--model-deployment",
        missing.toString(),
        "--url",
        "http://h:1");
  }

  /**
   * A valid one-role ModelDeployment with {@code extra} spliced into its spec and {@code role} into
   * its role.
   */
  private String spec(String extra, String role) throws IOException {
    return GlmModelDeployment.write(
            dir.resolve("md-" + Integer.toHexString((extra + role).hashCode()) + ".yaml"),
            "inference",
            """
            %s
            roles:
              - name: prefill
                selector: {matchLabels: {role: prefill}}
                engine: sglang
                port: http
            %s
            """
                .formatted(extra.stripTrailing(), role.indent(4).stripTrailing()))
        .toString();
  }

  @Test
  void aSpecTheApiServerWouldRefuseIsNotJudged() throws IOException {
    String refused = ": the API server would refuse this ModelDeployment: ";
    String[][] cases = {
      {"minPoolRatoi: 2", "", "spec.minPoolRatoi: unknown field"},
      {"", "scheme: http\nextra: 1", "spec.roles[0].extra: unknown field"},
      {
        "probe: {timeoutSeconds: 900}",
        "",
        "spec.probe.timeoutSeconds: Invalid value: 900: should be less than or" + " equal to 300"
      },
      {
        "rejectionProbe: {enabled: true, marginTokens: 2000000}",
        "",
        "spec.rejectionProbe.marginTokens: Invalid value: 2000000"
      },
      {
        "",
        "minEngineVersion: latest",
        "spec.roles[0].minEngineVersion: Invalid value: should match"
      },
      {"minPoolRatio: \"2\"", "", "spec.minPoolRatio: Invalid value: must be of type number"},
      {"", "metricsPort: 70000", "spec.roles[0].metricsPort: Invalid value: 70000"},
      {
        "",
        "minEngineVersion: \"0.5.22\\n\"",
        "spec.roles[0].minEngineVersion: Invalid value: should match"
      },
    };
    for (String[] c : cases) {
      String file = spec(c[0], c[1]);
      assertUsageError(
          "--model-deployment " + file + refused + c[2],
          "--model-deployment",
          file,
          "--url",
          "http://h:1");
    }
  }

  @Test
  void aFileLargerThanTheApiServerTakesIsRefusedBeforeItIsParsed() throws IOException {
    Path big = dir.resolve("big.yaml");
    // One long scalar: the YAML parser would take minutes over 60 MiB of it.
    try (var out = Files.newBufferedWriter(big)) {
      out.write(Files.readString(Path.of(spec("", ""))) + "---\nkind: ConfigMap\ndata: {k: \"");
      char[] chunk = new char[1 << 20];
      java.util.Arrays.fill(chunk, 'x');
      for (int i = 0; i < 64; i++) {
        out.write(chunk);
      }
      out.write("\"}\n");
    }
    long started = System.nanoTime();
    assertUsageError(
        "--model-deployment " + big + " is larger than 3 MiB",
        "--model-deployment",
        big.toString(),
        "--url",
        "http://h:1");
    assertThat(java.time.Duration.ofNanos(System.nanoTime() - started))
        .isLessThan(java.time.Duration.ofSeconds(5));
  }

  @Test
  void aliasesOtherApiVersionsAndSecondModelDeploymentsAreRefused() throws IOException {
    Path alias = dir.resolve("alias.yaml");
    Files.writeString(
        alias,
        Files.readString(Path.of(spec("", "")))
            .replace("model: zai-org/GLM-5.3", "model: *m")
            .replace("metadata: {", "metadata: {labels: {m: &m zai-org/GLM-5.3}, "));
    assertUsageError(
        "--model-deployment holds a YAML alias (*m)",
        "--model-deployment",
        alias.toString(),
        "--url",
        "http://h:1");

    Path other = dir.resolve("other.yaml");
    Files.writeString(
        other,
        Files.readString(Path.of(spec("", ""))).replace("kvguard.io/v1alpha1", "kvguard.io/v1"));
    assertUsageError(
        "--model-deployment "
            + other
            + " holds 0 ModelDeployments, expected one (apiVersion"
            + " kvguard.io/v1alpha1)",
        "--model-deployment",
        other.toString(),
        "--url",
        "http://h:1");

    Path two = dir.resolve("two.yaml");
    String one = Files.readString(Path.of(spec("", "")));
    Files.writeString(two, one + "---\n" + one);
    assertUsageError(
        "--model-deployment " + two + " holds 2 ModelDeployments, expected one",
        "--model-deployment",
        two.toString(),
        "--url",
        "http://h:1");
  }

  @Test
  void whereTheOperatorWouldProbeDiffersFromTheUrlIsRefused() throws IOException {
    String https = spec("", "scheme: https");
    assertUsageError(
        "--url is http but role prefill is probed over https (its scheme)",
        "--model-deployment",
        https,
        "--url",
        "http://h:1");
    String named = spec("", "metricsPort: metrics");
    assertUsageError(
        "role prefill reads metrics on the container port named metrics: give its number (or its"
            + " forwarded port) with --metrics-port",
        "--model-deployment",
        named,
        "--url",
        "http://h:1");
    assertUsageError(
        "--metrics-port: role prefill names no metricsPort",
        "--model-deployment",
        spec("", ""),
        "--url",
        "http://h:1",
        "--metrics-port",
        "8002");
  }

  /**
   * The schema check refuses nothing the docs tell users to apply (the examples pass the CRD's own
   * validator too).
   */
  @Test
  void everyModelDeploymentInTheExamplesFitsTheSchema() throws IOException {
    var yaml =
        new com.fasterxml.jackson.databind.ObjectMapper(
            new com.fasterxml.jackson.dataformat.yaml.YAMLFactory());
    int checked = 0;
    try (var files = Files.list(Path.of("../docs/examples"))) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        try (var parser = yaml.getFactory().createParser(file.toFile())) {
          var documents = yaml.readValues(parser, com.fasterxml.jackson.databind.JsonNode.class);
          while (documents.hasNext()) {
            var document = documents.next();
            if (document != null && "ModelDeployment".equals(document.path("kind").asText())) {
              assertThat(CrdSchema.violation(document)).as(file.toString()).isEmpty();
              checked++;
            }
          }
        }
      }
    }
    assertThat(checked).isGreaterThan(3);
  }
}

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

/** {@code check --model-deployment}: which files and flag combinations it refuses, and what it says (exit 2). */
class CheckModelDeploymentTest {
  /** The documented example: a LeaderWorkerSet and a ModelDeployment with roles prefill and decode. */
  private static final String EXAMPLE = "../docs/examples/sglang-prefill-decode-lws.yaml";

  @TempDir
  Path dir;

  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int check(String... args) {
    return new CheckCommand(EngineProbes.standard(EngineHttp.createDefault())).run(args,
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
    assertUsageError("--model-deployment " + EXAMPLE + " has roles prefill, decode: name one with --role",
        "--model-deployment", EXAMPLE, "--url", "http://h:1");
    assertUsageError("--role router is not a role of " + EXAMPLE + " (prefill, decode)",
        "--model-deployment", EXAMPLE, "--role", "router", "--url", "http://h:1");
  }

  @Test
  void whatTheSpecSaysCannotAlsoBeGivenAsAFlag() {
    for (String[] flag : new String[][] {{"--engine", "sglang"}, {"--context-window", "1"}, {"--min-pool-ratio", "2"},
        {"--allow-engine-context-above-pool"}}) {
      String[] args = new String[flag.length + 6];
      System.arraycopy(new String[] {"--model-deployment", EXAMPLE, "--role", "prefill", "--url", "http://h:1"}, 0,
          args, 0, 6);
      System.arraycopy(flag, 0, args, 6, flag.length);
      assertUsageError(flag[0] + " cannot be combined with --model-deployment (the spec says it)", args);
    }
    assertUsageError("--role needs --model-deployment", "--engine", "sglang", "--context-window", "1",
        "--url", "http://h:1", "--role", "prefill");
  }

  @Test
  void aSpecTheOperatorCannotApplyIsRefusedWithTheOperatorsWords() throws IOException {
    Path file = dir.resolve("md.yaml");
    Files.writeString(file, """
        apiVersion: kvguard.io/v1alpha1
        kind: ModelDeployment
        metadata: {name: glm, namespace: inference}
        spec:
          model: zai-org/GLM-5.3
          contextWindow: 1048576
          roles:
            - name: prefill
              selector: {matchExpressions: [{key: role, operator: in, values: [prefill]}]}
              engine: sglang
              port: http
        """);

    assertUsageError("--model-deployment " + file + ": kvguard cannot apply this spec: role prefill: matchExpression role"
        + " has unknown operator in", "--model-deployment", file.toString(), "--url", "http://h:1");
  }

  @Test
  void aFileWithoutExactlyOneModelDeploymentIsRefused() throws IOException {
    Path none = dir.resolve("none.yaml");
    Files.writeString(none, "apiVersion: v1\nkind: Service\nmetadata: {name: glm}\n");
    Path missing = dir.resolve("missing.yaml");

    assertUsageError("--model-deployment " + none + " holds 0 ModelDeployments, expected one",
        "--model-deployment", none.toString(), "--url", "http://h:1");
    assertUsageError("--model-deployment " + missing + " cannot be read as YAML",
        "--model-deployment", missing.toString(), "--url", "http://h:1");
  }
}

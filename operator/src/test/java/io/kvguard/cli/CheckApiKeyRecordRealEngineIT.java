package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvguard.testing.EngineFixtures;
import io.kvguard.testing.LlamaServerAvailable;
import io.kvguard.testing.LlamaServers;
import io.kvguard.testkit.FakeEngine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check --api-key-file} and {@code check --record} against a real llama-server started with
 * {@code --api-key}: the key is needed, sent, and appears in no file of the record, which replays
 * as a fixture to the same verdict.
 */
@ExtendWith(LlamaServerAvailable.class)
class CheckApiKeyRecordRealEngineIT {
  /** A JSON escape of it differs from it ("/" may be written "\/"). */
  private static final String KEY = "kvguard-it/key-7d0e5a";

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private final LlamaServers servers = new LlamaServers();
  private final List<FakeEngine> replays = new ArrayList<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @AfterEach
  void stopServers() {
    servers.close();
    replays.forEach(FakeEngine::close);
  }

  private int check(String url, String... more) {
    out.reset();
    err.reset();
    List<String> args =
        new ArrayList<>(
            List.of(
                "--engine",
                "llamacpp",
                "--url",
                url,
                "--context-window",
                "8192",
                "--rejection-probe"));
    args.addAll(List.of(more));
    return CheckCommand.standard()
        .run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String keyFile() throws IOException {
    Path file = dir.resolve("api-key");
    if (!Files.exists(file)) {
      Files.writeString(file, KEY + "\n");
    }
    return file.toString();
  }

  @Test
  void withoutTheKeyFileTheCheckFailsWithAReasonNamingTheMissingKey() throws IOException {
    String url = servers.start(8192, "-np", "1", "--api-key", KEY).url();

    int exit = check(url);

    assertThat(exit).as(out()).isEqualTo(CheckCommand.EXIT_FAILED);
    assertThat(out())
        .contains(
            "ProbeFailed",
            "HTTP 401",
            "it requires an API key and none was sent",
            "--api-key-file FILE");
  }

  @Test
  void withTheKeyFileTheServerIsVerifiedAndRefusesAPromptOfItsSlotContext() throws IOException {
    String url = servers.start(8192, "-np", "1", "--api-key", KEY).url();

    int exit = check(url, "--api-key-file", keyFile());

    assertThat(exit).as(out() + err).isZero();
    assertThat(out())
        .contains(
            "Verified (PoolSufficient)",
            "KV pool         8192 tokens",
            "rejection       one prompt per admission path was refused, each by its own check (L1"
                + " slot context check (N >= n_ctx) refused 8192 tokens with HTTP 400");
  }

  @Test
  void aRecordReplaysAsAFixtureToTheSameVerdictAndHoldsTheKeyNowhere() throws IOException {
    String url = servers.start(8192, "-np", "1", "--api-key", KEY).url();
    Path record = dir.resolve("record");

    int exit =
        check(url, "--api-key-file", keyFile(), "--output", "json", "--record", record.toString());

    assertThat(exit).as(out()).isZero();
    JsonNode live = JSON.readTree(out());
    try (Stream<Path> files = Files.list(record)) {
      for (Path file : files.toList()) {
        String text = Files.readString(file, StandardCharsets.ISO_8859_1);
        assertThat(text)
            .as("%s", file.getFileName())
            .doesNotContain(KEY)
            .doesNotContain(new String(JsonStringEncoder.getInstance().quoteAsString(KEY)))
            .doesNotContain(KEY.replace("/", "\\/"));
      }
    }
    assertThat(Files.readString(record.resolve("01-props-request.txt")))
        .contains("Authorization: <redacted>");

    FakeEngine replay = new FakeEngine().serve(EngineFixtures.record(record)).requireBearer(KEY);
    replays.add(replay);
    int replayed =
        check("http://127.0.0.1:" + replay.port(), "--api-key-file", keyFile(), "--output", "json");

    assertThat(replayed).as(out()).isZero();
    assertThat(withoutUrl(JSON.readTree(out()))).isEqualTo(withoutUrl(live));
    assertThat(replay.hits("/completion")).as("the rejection probe replayed too").isEqualTo(1);
  }

  private static JsonNode withoutUrl(JsonNode report) {
    ObjectNode copy = report.deepCopy();
    copy.remove("url");
    return copy;
  }
}

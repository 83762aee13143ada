package io.kvguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.testing.LlamaServerAvailable;
import io.kvguard.testing.LlamaServers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code check}, the preflight a pipeline runs, against real llama-servers. */
@ExtendWith(LlamaServerAvailable.class)
class CheckCommandRealEngineIT {
  private final LlamaServers servers = new LlamaServers();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  @AfterEach
  void stopServers() {
    servers.close();
  }

  private int check(String url, String... more) {
    String[] args = new String[6 + more.length];
    System.arraycopy(
        new String[] {"--engine", "llamacpp", "--url", url, "--context-window", "8192"},
        0,
        args,
        0,
        6);
    System.arraycopy(more, 0, args, 6, more.length);
    return new CheckCommand(EngineProbes.standard(EngineHttp.createDefault()))
        .run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  @Test
  void aServerWhoseSlotHoldsTheWindowAndRefusesAPromptOfItPassesWithExitZero() throws IOException {
    String url = servers.start(8192, "-np", "1").url();

    int exit = check(url, "--rejection-probe");

    assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains(
            "Verified (PoolSufficient)",
            "KV pool         8192 tokens",
            "engine version  b0-unknown",
            "rejection       one prompt per admission path was refused, each by its own check (L1"
                + " slot context check (N >= n_ctx) refused 8192 tokens with HTTP 400 as"
                + " exceed_context_size_error, whole answer matched)");
  }

  @Test
  void fourSlotsSplittingTheCacheFailWithExitOneAndTheSlotsSize() throws IOException {
    String url = servers.start(8192, "-np", "4").url();

    int exit = check(url);

    assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(1);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("PoolTooSmall", "KV pool         2048 tokens");
  }
}

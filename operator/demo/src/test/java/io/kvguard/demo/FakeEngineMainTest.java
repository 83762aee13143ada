package io.kvguard.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvguard.cli.CheckCommand;
import io.kvguard.cli.UsageException;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.testkit.FakeEngineOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fake-engine image's process: its answers pass the real probe, and a restart comes back with
 * the new pool.
 */
class FakeEngineMainTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private final List<FakeEngineMain> started = new ArrayList<>();
  private final CountDownLatch exited = new CountDownLatch(1);

  @TempDir Path dir;

  @AfterEach
  void stop() {
    started.forEach(FakeEngineMain::close);
  }

  private FakeEngineMain start(String... extra) throws Exception {
    List<String> args =
        new ArrayList<>(List.of("--bind", "127.0.0.1", "--port", "0", "--admin-port", "0"));
    args.addAll(List.of(extra));
    FakeEngineMain main = FakeEngineMain.start(args.toArray(String[]::new), exited::countDown);
    started.add(main);
    return main;
  }

  private static String check(FakeEngineMain main, int expectedExit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit =
        new CheckCommand(EngineProbes.standard(EngineHttp.createDefault()))
            .run(
                new String[] {
                  "--engine",
                  main.serving().shape(),
                  "--url",
                  "http://127.0.0.1:" + main.enginePort(),
                  "--context-window",
                  "1048576"
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream()));
    assertThat(exit).as(out.toString(StandardCharsets.UTF_8)).isEqualTo(expectedExit);
    return out.toString(StandardCharsets.UTF_8);
  }

  private static HttpResponse<String> admin(FakeEngineMain main, String method, String query)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + main.adminPort() + "/admin/restart" + query))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesTheShapeTheOperatorsProbeReads() throws Exception {
    FakeEngineMain main =
        start("--shape", "sglang", "--pool", "681280", "--ranks", "2", "--mode", "prefill");

    assertThat(check(main, 1))
        .contains("KV pool 681280 tokens < context window 1048576", "mode            prefill");
  }

  @Test
  void aRestartRecordsTheNewPoolExitsAndTheNextStartServesIt() throws Exception {
    Path state = dir.resolve("engine.properties");
    String[] args = {
      "--shape", "sglang", "--pool", "681280", "--ranks", "2", "--state-file", state.toString()
    };
    FakeEngineMain first = start(args);

    HttpResponse<String> restart = admin(first, "POST", "?pool=2040000");

    assertThat(restart.statusCode()).isEqualTo(202);
    assertThat(exited.await(5, TimeUnit.SECONDS))
        .as("the process exits so the kubelet restarts it")
        .isTrue();
    assertThat(Files.readString(state)).contains("pool=2040000");
    first.close();

    // The kubelet runs the same command again; the state file on the pod's emptyDir carries the new
    // pool.
    FakeEngineMain second = start(args);
    assertThat(second.serving().poolPerRank()).isEqualTo(2_040_000);
    assertThat(check(second, 0)).contains("KV pool         2040000 tokens");
  }

  @Test
  void aRestartWithoutStateFileIsRefusedBecauseItWouldComeBackUnchanged() throws Exception {
    FakeEngineMain main = start("--pool", "681280");

    assertThat(admin(main, "POST", "?pool=2040000").statusCode()).isEqualTo(409);
    assertThat(exited.getCount()).isEqualTo(1);
  }

  @Test
  void badRestartRequestsChangeNothing() throws Exception {
    Path state = dir.resolve("engine.properties");
    FakeEngineMain main = start("--pool", "681280", "--state-file", state.toString());

    assertThat(admin(main, "GET", "?pool=2040000").statusCode()).isEqualTo(405);
    assertThat(admin(main, "POST", "?pool=lots").statusCode()).isEqualTo(400);
    assertThat(admin(main, "POST", "?pool=0").statusCode()).isEqualTo(400);
    assertThat(state).doesNotExist();
    assertThat(exited.getCount()).isEqualTo(1);
  }

  @Test
  void optionsSurviveTheTripThroughTheCommandLine() throws Exception {
    FakeEngineOptions options =
        new FakeEngineOptions("vllm", 1_100_000, 4, 131_072, "decode", "0.11.0");

    FakeEngineMain main = start(options.toArgs().toArray(String[]::new));

    assertThat(main.serving()).isEqualTo(options);
  }

  @Test
  void usageErrorsExitTwo() throws IOException, InterruptedException {
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        FakeEngineMain.run(
            new String[] {"--shape", "tgi", "--pool", "1"},
            new PrintStream(new ByteArrayOutputStream()),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--shape must be sglang or vllm", "Usage:");
    assertThatThrownBy(() -> FakeEngineMain.start(new String[] {"--shape", "sglang"}, () -> {}))
        .isInstanceOf(UsageException.class)
        .hasMessageContaining("--pool is required");
  }
}

package io.kvguard.testkit;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real llama.cpp {@code llama-server} on loopback, started from the binary the environment
 * variable {@value #BINARY_VARIABLE} names and serving {@link TinyGguf}. It is ready once {@code
 * /health} answers 200; its log goes to a file so a failed test can show what the engine said.
 * Closing it stops the process, forcibly if it does not stop within five seconds.
 */
public final class LlamaServer implements AutoCloseable {
  public static final String BINARY_VARIABLE = "KVGUARD_LLAMA_SERVER";
  static final Duration HEALTHY_WITHIN = Duration.ofSeconds(30);
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final Process process;
  private final int port;
  private final Path log;
  private final List<String> command;

  private LlamaServer(Process process, int port, Path log, List<String> command) {
    this.process = process;
    this.port = port;
    this.log = log;
    this.command = command;
  }

  /** The binary {@value #BINARY_VARIABLE} names, if it is set. */
  public static Optional<Path> binary() {
    String value = System.getenv(BINARY_VARIABLE);
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
  }

  /**
   * Starts {@code llama-server -m model --host 127.0.0.1 --port P -c contextSize -t 1 --no-warmup}
   * followed by {@code flags}, in {@code workDir} (which receives the log), and waits until it is
   * healthy.
   */
  public static LlamaServer start(Path model, Path workDir, int contextSize, String... flags)
      throws IOException {
    Path binary =
        binary().orElseThrow(() -> new IllegalStateException(BINARY_VARIABLE + " is not set"));
    int port = freePort();
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.addAll(
        List.of(
            "-m",
            model.toString(),
            "--host",
            "127.0.0.1",
            "--port",
            String.valueOf(port),
            "-c",
            String.valueOf(contextSize),
            "-t",
            "1",
            "--no-warmup"));
    command.addAll(List.of(flags));
    Path log = Files.createTempFile(workDir, "llama-server-" + port + "-", ".log");
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    LlamaServer server = new LlamaServer(process, port, log, List.copyOf(command));
    try {
      server.awaitHealthy();
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    return server;
  }

  public int port() {
    return port;
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  /** The command line it was started with, for recording next to what it answered. */
  public List<String> command() {
    return command;
  }

  public Path log() {
    return log;
  }

  /** The engine's log so far. */
  public String logText() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  private void awaitHealthy() throws IOException {
    Instant deadline = Instant.now().plus(HEALTHY_WITHIN);
    HttpRequest health =
        HttpRequest.newBuilder(URI.create(url() + "/health"))
            .timeout(Duration.ofSeconds(2))
            .build();
    while (Instant.now().isBefore(deadline)) {
      if (!process.isAlive()) {
        throw new IOException(
            "llama-server exited with "
                + process.exitValue()
                + " before it was healthy:\n"
                + logText());
      }
      try {
        if (HTTP.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // Not listening yet: the model is still loading.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for llama-server", e);
      }
      sleep(Duration.ofMillis(50));
    }
    throw new IOException(
        "llama-server was not healthy within " + HEALTHY_WITHIN.toSeconds() + " s:\n" + logText());
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** A port free now; llama-server fails to start, and says so, if another process takes it. */
  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

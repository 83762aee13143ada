package io.kvguard.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Records what a live llama-server answers to the requests kvguard's llama.cpp probe and rejection
 * probe send, as raw HTTP answers (status line, content type, body) for the unit tests to replay,
 * and writes which command line produced each. Run by hand when the binary changes:
 *
 * <pre>
 * KVGUARD_LLAMA_SERVER=/path/to/llama-server \
 *   java -cp operator/testkit/target/classes io.kvguard.testkit.LlamaServerRecorder \
 *   operator/src/test/resources/engines/llamacpp-d14ce3d d14ce3dab
 * </pre>
 *
 * Only the content type of the headers is kept: the others (server name, CORS) are nothing a probe
 * reads.
 */
public final class LlamaServerRecorder {
  /** The window the recordings are about: every server runs {@code -c} of it. */
  static final int CONTEXT = 8192;

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Map<Integer, String> REASONS =
      Map.of(200, "OK", 400, "Bad Request", 401, "Unauthorized", 404, "Not Found");

  private final Path out;
  private final Path model;
  private final List<String> index = new ArrayList<>();

  private LlamaServerRecorder(Path out, Path model) {
    this.out = out;
    this.model = model;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      throw new IllegalArgumentException(
          "usage: LlamaServerRecorder <output folder> <upstream llama.cpp commit of the binary>");
    }
    recordInto(Path.of(args[0]), args[1]);
  }

  /** Records every answer into {@code out}, with its SOURCE.md naming {@code commit}. */
  public static void recordInto(Path out, String commit) throws IOException, InterruptedException {
    Files.createDirectories(out);
    Path work = Files.createTempDirectory("llama-recorder-");
    try {
      LlamaServerRecorder recorder =
          new LlamaServerRecorder(out, TinyGguf.write(work.resolve("tiny.gguf"), 42));
      recorder.recordAll(work);
      recorder.writeSource(commit);
    } finally {
      // The model and the servers' logs: a server that failed to start put its log in the error.
      try (Stream<Path> files = Files.walk(work)) {
        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(file);
        }
      }
    }
  }

  private void recordAll(Path work) throws IOException, InterruptedException {
    try (LlamaServer server = LlamaServer.start(model, work, CONTEXT, "-np", "1", "--metrics")) {
      save(server, "np1", "props", get(server, "/props"));
      save(server, "np1", "slots", get(server, "/slots"));
      save(server, "np1", "metrics", get(server, "/metrics"));
      save(server, "np1", "completion", overLongPrompt(server, CONTEXT + 1));
      // kvguard's L1 prompt: N = S, the shortest the slot context check (N >= S) refuses.
      save(server, "np1-at-context", "completion", overLongPrompt(server, CONTEXT));
    }
    try (LlamaServer server =
        LlamaServer.start(model, work, CONTEXT, "-np", "1", "--context-shift")) {
      save(server, "np1-context-shift", "completion", overLongPrompt(server, CONTEXT + 1));
    }
    try (LlamaServer server = LlamaServer.start(model, work, CONTEXT, "-np", "4")) {
      save(server, "np4", "props", get(server, "/props"));
    }
    try (LlamaServer server = LlamaServer.start(model, work, CONTEXT, "-np", "4", "-kvu")) {
      save(server, "np4-kvu", "props", get(server, "/props"));
    }
    try (LlamaServer server = LlamaServer.start(model, work, CONTEXT)) {
      save(server, "auto", "props", get(server, "/props"));
      save(server, "auto", "slots", get(server, "/slots"));
    }
    try (LlamaServer server =
        LlamaServer.start(model, work, CONTEXT, "-np", "1", "--api-key", "recorded-key")) {
      save(server, "api-key", "props", get(server, "/props"));
    }
  }

  private static HttpRequest get(LlamaServer server, String path) {
    return HttpRequest.newBuilder(URI.create(server.url() + path)).GET().build();
  }

  /** What kvguard's rejection probe sends: token IDs, one output token, no stream. */
  private static HttpRequest overLongPrompt(LlamaServer server, int tokens) {
    String ids = String.join(",", Collections.nCopies(tokens, "100"));
    return HttpRequest.newBuilder(URI.create(server.url() + "/completion"))
        .header("Content-Type", "application/json")
        .POST(
            HttpRequest.BodyPublishers.ofString(
                "{\"prompt\":[" + ids + "],\"n_predict\":1,\"stream\":false}"))
        .build();
  }

  private void save(LlamaServer server, String setup, String what, HttpRequest request)
      throws IOException, InterruptedException {
    HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    String name = what + "-" + setup + "-" + answer.statusCode() + ".http";
    String contentType = answer.headers().firstValue("Content-Type").orElse("");
    String raw =
        "HTTP/1.1 "
            + answer.statusCode()
            + " "
            + REASONS.getOrDefault(answer.statusCode(), "")
            + "\r\ncontent-type: "
            + contentType
            + "\r\n\r\n"
            + answer.body();
    Files.writeString(out.resolve(name), raw, StandardCharsets.UTF_8);
    List<String> command = new ArrayList<>(server.command());
    command.set(0, "llama-server");
    command.set(command.indexOf("-m") + 1, "tiny.gguf");
    command.set(command.indexOf("--port") + 1, "P");
    index.add(
        "- `"
            + name
            + "`: "
            + request.method()
            + " "
            + request.uri().getPath()
            + (what.equals("completion")
                ? " (" + (setup.endsWith("at-context") ? CONTEXT : CONTEXT + 1) + " token IDs)"
                : "")
            + " to `"
            + String.join(" ", command)
            + "`");
  }

  /**
   * SOURCE.md as EngineFixturesTest wants it: the source first, then every file and its command.
   */
  private void writeSource(String commit) throws IOException {
    String text =
        "Derived from ggml-org/llama.cpp `tools/server/server-context.cpp` at upstream "
            + commit
            + ": recorded from a live llama-server built at that commit, serving the test kit's"
            + " TinyGguf model (seed 42), by `io.kvguard.testkit.LlamaServerRecorder` (see"
            + " docs/e2e.md). Headers other than content-type are dropped; P is a free loopback"
            + " port.\n\n"
            + String.join("\n", index)
            + "\n";
    Files.writeString(out.resolve("SOURCE.md"), text, StandardCharsets.UTF_8);
  }
}

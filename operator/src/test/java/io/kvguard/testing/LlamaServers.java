package io.kvguard.testing;

import io.kvguard.testkit.LlamaServer;
import io.kvguard.testkit.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The real llama-servers one test started, on the tiny model, all stopped when it ends. Their logs
 * stay under {@code target/llama-server/} for when a test fails.
 */
public final class LlamaServers implements AutoCloseable {
  private static final Path WORK = Path.of("target", "llama-server");
  private final List<LlamaServer> started = new ArrayList<>();

  /** The tiny model, written once per JVM (the same bytes every time). */
  private static synchronized Path model() throws IOException {
    Path model = WORK.resolve("tiny.gguf");
    if (!Files.exists(model)) {
      Files.createDirectories(WORK);
      TinyGguf.write(model, 42);
    }
    return model;
  }

  /** A healthy llama-server with {@code -c contextSize} and these flags. */
  public LlamaServer start(int contextSize, String... flags) throws IOException {
    LlamaServer server = LlamaServer.start(model(), WORK, contextSize, flags);
    started.add(server);
    return server;
  }

  @Override
  public void close() {
    started.forEach(LlamaServer::close);
    started.clear();
  }
}

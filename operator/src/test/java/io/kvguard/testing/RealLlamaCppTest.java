package io.kvguard.testing;

import io.kvguard.testkit.LlamaServer;
import io.kvguard.testkit.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the *RealEngineIT classes that run the operator against real llama-servers: each test
 * starts the servers it needs on the tiny model and stops them when it ends. Their logs stay under
 * {@code target/llama-server/} for when a test fails.
 */
@ExtendWith(LlamaServerAvailable.class)
public abstract class RealLlamaCppTest extends EmbeddedClusterTest {
  private static final Path WORK = Path.of("target", "llama-server");
  private final List<LlamaServer> servers = new ArrayList<>();

  /** The tiny model, written once per JVM (the same bytes every time). */
  protected static synchronized Path model() throws IOException {
    Path model = WORK.resolve("tiny.gguf");
    if (!Files.exists(model)) {
      Files.createDirectories(WORK);
      TinyGguf.write(model, 42);
    }
    return model;
  }

  /** A healthy llama-server with {@code -c contextSize} and these flags, stopped after the test. */
  protected LlamaServer server(int contextSize, String... flags) throws IOException {
    LlamaServer server = LlamaServer.start(model(), WORK, contextSize, flags);
    servers.add(server);
    return server;
  }

  /** A Running pod, with the gate, whose engine port is the server's. */
  protected void pod(String name, Map<String, String> labels, LlamaServer server) {
    h.pods.createRunning(OperatorHarness.NAMESPACE, name, labels, server.port(), true);
  }

  @AfterEach
  void stopServers() {
    servers.forEach(LlamaServer::close);
  }
}

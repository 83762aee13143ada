package io.kvguard.testing;

import io.kvguard.testkit.LlamaServer;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Base of the *RealEngineIT classes that run the operator against real llama-servers: each test
 * starts the servers it needs and they stop when it ends.
 */
@ExtendWith(LlamaServerAvailable.class)
public abstract class RealLlamaCppTest extends EmbeddedClusterTest {
  private final LlamaServers servers = new LlamaServers();

  /** A healthy llama-server with {@code -c contextSize} and these flags, stopped after the test. */
  protected LlamaServer server(int contextSize, String... flags) throws IOException {
    return servers.start(contextSize, flags);
  }

  /** A Running pod, with the gate, whose engine port is the server's. */
  protected void pod(String name, Map<String, String> labels, LlamaServer server) {
    h.pods.createRunning(OperatorHarness.NAMESPACE, name, labels, server.port(), true);
  }

  @AfterEach
  void stopServers() {
    servers.close();
  }
}

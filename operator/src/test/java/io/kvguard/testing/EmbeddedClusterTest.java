package io.kvguard.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the *IT classes: a fresh embedded API server and operator per test, as production wires
 * it.
 */
public abstract class EmbeddedClusterTest {
  protected OperatorHarness h;

  @BeforeEach
  void startCluster() {
    h = new OperatorHarness().start();
  }

  @AfterEach
  void stopCluster() {
    h.close();
  }

  /** Waits until the pod's kvguard.io/pool-verified condition shows this status and reason. */
  protected void awaitGate(String pod, String status, String reason) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(h.gate(pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getReason()).isEqualTo(reason);
                          assertThat(c.getStatus()).isEqualTo(status);
                        }));
  }
}

package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvguard.testing.PrivateCa;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.ProbeOutcome;
import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operator's probe client is built on a thread of its own while the informers start ({@link
 * EngineHttp#buildingInBackground(int)}, issue 28 §5): the first probe waits for it, and a client
 * that could not be built fails every probe that needs it, with the reason, instead of the
 * operator's start (before e5346e6 the build ran in {@code KvguardOperator.create} and its failure
 * stopped the operator from starting at all).
 */
class EngineHttpBackgroundClientTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, FakeEngine.Answer> SGLANG =
      EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000);

  private FakeEngine engine;

  @BeforeEach
  void engine() throws IOException {
    engine = new FakeEngine().serve(SGLANG);
  }

  @AfterEach
  void stop() {
    engine.close();
  }

  private EngineEndpoint endpoint() {
    return EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(5));
  }

  private static Supplier<HttpClient> failing(Throwable why) {
    return () -> {
      if (why instanceof Error error) {
        throw error;
      }
      throw (RuntimeException) why;
    };
  }

  /** An Error escaping the builder would leave the future unfinished: every probe hung on it. */
  @Test
  @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void aClientThatCannotBeBuiltFailsEveryProbeClosedWithTheReason() throws Exception {
    for (Throwable why :
        new Throwable[] {
          new IllegalStateException("no trust store at /etc/pki/missing"),
          new InternalError("no default SSLContext")
        }) {
      EngineHttp http =
          EngineHttp.buildingInBackground(failing(why), EngineHttp.DEFAULT_MAX_BODY_BYTES);
      for (EngineHttp each : new EngineHttp[] {http, http.tapped(new WireCapture())}) {
        // Every probe, not only the first: the failure is kept.
        for (int i = 0; i < 2; i++) {
          assertThat(failure(new SglangProbe(each).probe(endpoint().startingNow())))
              .contains("could not build its HTTP client")
              .contains(why.getMessage());
        }
        assertThatThrownBy(() -> each.postJson(endpoint(), "/generate", "{}".getBytes()))
            .isInstanceOf(ProbeException.class)
            .hasMessageContaining(why.getMessage());
        assertThatThrownBy(() -> each.delete(endpoint(), "/remove_worker?url=x"))
            .isInstanceOf(ProbeException.class)
            .hasMessageContaining(why.getMessage());
      }
    }
    assertThat(engine.totalHits()).as("requests that reached the engine").isZero();
  }

  @Test
  void aFailedPlainClientLeavesEnginesBehindProbeTlsProbed() {
    PrivateCa ca = PrivateCa.create("kvguard test CA");
    String name = "glm-engine.inference.svc";
    try (FakeEngine tlsEngine = ca.issue(name).serve(SGLANG)) {
      EngineHttp http =
          EngineHttp.buildingInBackground(
              failing(new IllegalStateException("no plain client")),
              EngineHttp.DEFAULT_MAX_BODY_BYTES);
      EngineEndpoint endpoint =
          EngineEndpoint.of("https", "127.0.0.1", tlsEngine.port(), Duration.ofSeconds(5))
              .withTls(
                  Optional.of(
                      EngineTls.of(ca.caPem, "Secret inference/engine-ca key ca.crt", name)));
      assertThat(observed(new SglangProbe(http).probe(endpoint)).poolTokens()).isEqualTo(2_040_000);
    }
  }

  @Test
  void theFirstProbeWaitsForTheClientAndProbesThenAsAlways() throws Exception {
    CountDownLatch built = new CountDownLatch(1);
    CompletableFuture<Thread> builtOn = new CompletableFuture<>();
    EngineHttp http =
        EngineHttp.buildingInBackground(
            () -> {
              builtOn.complete(Thread.currentThread());
              try {
                built.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return EngineHttp.newHttpClient();
            },
            EngineHttp.DEFAULT_MAX_BODY_BYTES);
    WireCapture capture = new WireCapture();
    CompletableFuture<ProbeOutcome> first = new CompletableFuture<>();
    Thread prober =
        new Thread(
            () -> {
              try {
                first.complete(
                    new SglangProbe(http.tapped(capture)).probe(endpoint().startingNow()));
              } catch (RuntimeException e) {
                first.completeExceptionally(e);
              }
            },
            "prober");
    prober.start();

    Thread builder = builtOn.get(5, TimeUnit.SECONDS);
    assertThat(builder.getName()).isEqualTo("kvguard-engine-http-client");
    assertThat(builder.isDaemon()).as("the builder keeps no JVM alive").isTrue();
    // Parked: waiting for the client (nothing else in a probe before its first request waits).
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> prober.getState() == Thread.State.WAITING);
    assertThat(first).as("the probe waits for the client").isNotDone();
    assertThat(engine.totalHits()).isZero();

    built.countDown();
    assertThat(observed(first.get(10, TimeUnit.SECONDS)).poolTokens()).isEqualTo(2_040_000);
    assertThat(capture.exchanges()).as("the tapped copy shares the client").isNotEmpty();
    assertThat(observed(new SglangProbe(http).probe(endpoint().startingNow())).poolTokens())
        .isEqualTo(2_040_000);
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngine.Answer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a tapped EngineHttp keeps of each request and answer, and that it changes neither. */
class WireCaptureTest {
  private final FakeEngine engine;

  WireCaptureTest() throws java.io.IOException {
    engine = new FakeEngine();
  }

  @AfterEach
  void close() {
    engine.close();
  }

  private EngineEndpoint endpoint() {
    return new EngineEndpoint(
        URI.create("http://127.0.0.1:" + engine.port()),
        Duration.ofSeconds(5),
        Optional.of("a-bearer-token-123"));
  }

  @Test
  void aLargeAnswerIsKeptUpToTheCapAndCountedWholeWhileTheProbeReadsItAll() throws Exception {
    byte[] big = new byte[100_000];
    Arrays.fill(big, (byte) 'x');
    engine.answer("/big", new Answer(200, "text/plain", big, 0));
    WireCapture capture = new WireCapture(1024);

    EngineResponse response =
        EngineHttp.createDefault().tapped(capture).get(endpoint(), "/big", Reading.raw());

    assertThat(response.length()).as("the probe read the whole answer").isEqualTo(100_000);
    List<WireCapture.Exchange> exchanges = capture.exchanges();
    assertThat(exchanges).hasSize(1);
    WireCapture.Exchange exchange = exchanges.get(0);
    assertThat(exchange.method()).isEqualTo("GET");
    assertThat(exchange.uri().getPath()).isEqualTo("/big");
    assertThat(exchange.requestHeaders().get("Authorization"))
        .containsExactly("Bearer a-bearer-token-123");
    assertThat(exchange.status()).isEqualTo(200);
    assertThat(exchange.answerHeaders().get("content-type")).containsExactly("text/plain");
    assertThat(exchange.answerBody().bytes()).hasSize(1024);
    assertThat(exchange.answerBody().total()).isEqualTo(100_000);
    assertThat(exchange.answerBody().cut()).isTrue();
  }

  @Test
  void aPostedBodyIsSentWholeAndKeptAsSent() throws Exception {
    engine.answer("/completion", Answer.json("{\"ok\":true}"));
    WireCapture capture = new WireCapture();
    byte[] json = "{\"prompt\":[1,2,3]}".getBytes(StandardCharsets.UTF_8);

    EngineHttp.createDefault().tapped(capture).postJson(endpoint(), "/completion", json);

    assertThat(engine.lastBody("/completion")).isEqualTo(json);
    WireCapture.Exchange exchange = capture.exchanges().get(0);
    assertThat(exchange.requestBody().bytes()).isEqualTo(json);
    assertThat(exchange.requestBody().cut()).isFalse();
    assertThat(new String(exchange.answerBody().bytes(), StandardCharsets.UTF_8))
        .isEqualTo("{\"ok\":true}");
  }

  @Test
  void aRequestThatGotNoAnswerIsKeptWithWhyAndCredentialRefusalsAreNoticed() throws Exception {
    engine.requireBearer("another-token-456");
    engine.answer("/props", Answer.json("{}"));
    WireCapture capture = new WireCapture();
    EngineHttp http = EngineHttp.createDefault().tapped(capture);

    assertThat(http.get(endpoint(), "/props").status()).isEqualTo(401);
    engine.close();
    org.junit.jupiter.api.Assertions.assertThrows(
        ProbeException.class, () -> http.get(endpoint(), "/props"));

    assertThat(capture.credentialsRefused()).hasValue(401);
    assertThat(capture.exchanges().get(1).status()).isEqualTo(-1);
    assertThat(capture.exchanges().get(1).failure())
        .hasValueSatisfying(f -> assertThat(f).contains("GET /props failed"));
  }

  @Test
  void tappingReturnsANewClientAndLeavesTheOperatorsUntapped() throws Exception {
    engine.answer("/props", Answer.json("{}"));
    WireCapture capture = new WireCapture();
    EngineHttp operators = EngineHttp.createDefault();
    EngineHttp checks = operators.tapped(capture);

    operators.get(endpoint(), "/props");
    assertThat(capture.exchanges()).isEmpty();
    checks.get(endpoint(), "/props");
    assertThat(capture.exchanges()).hasSize(1);
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.customresource.Engine;
import io.kvguard.demo.FakeEngine;
import io.kvguard.verdict.RejectionOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The over-limit request per engine, against fake engines that refuse, answer, or hang. */
class RejectionProbeTest {
  private final FakeEngine engine = newEngine();
  private final RejectionProbe probe = new RejectionProbe(EngineHttp.createDefault());

  private static FakeEngine newEngine() {
    try {
      return new FakeEngine();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void stop() {
    engine.close();
  }

  private EngineEndpoint endpoint(Duration timeout) {
    return EngineEndpoint.of("http", "127.0.0.1", engine.port(), timeout);
  }

  private static FakeEngine.Answer answer(int status, String body) {
    return new FakeEngine.Answer(status, "application/json", body.getBytes(StandardCharsets.UTF_8), 0);
  }

  @ParameterizedTest(name = "{0} refuses on {1}")
  @CsvSource({
      "sglang, /generate, 'Input length (4097 tokens) exceeds the maximum allowed length (4096 tokens)'",
      "vllm, /v1/completions, 'This model''s maximum context length is 4096 tokens. However, you requested 4097 tokens'",
      "llamacpp, /completion, 'the request exceeds the available context size, type exceed_context_size_error'",
      "tgi, /generate, 'Input validation error: inputs tokens + max_new_tokens must be <= 4096'"})
  void aRefusalNamingTheLengthIsRecognisedForEveryEngine(String engineName, String path, String error) throws Exception {
    engine.answer(path, answer(path.equals("/generate") && engineName.equals("tgi") ? 422 : 400,
        "{\"error\":\"" + error.replace("\"", "'") + "\"}"));
    Engine kind = Engine.valueOf(engineName.toUpperCase(java.util.Locale.ROOT));

    RejectionOutcome outcome = probe.send(kind, endpoint(Duration.ofSeconds(5)), 4_097, "m");

    assertThat(outcome).isInstanceOfSatisfying(RejectionOutcome.Refused.class, r -> {
      assertThat(r.namesLength()).isTrue();
      assertThat(r.promptTokens()).isEqualTo(4_097);
    });
    assertThat(engine.hits(path)).isEqualTo(1);
    // The engine was asked with a 4,097-token prompt for one output token.
    JsonNode sent = new ObjectMapper().readTree(engine.lastBody(path));
    if (kind == Engine.TGI) {
      assertThat(sent.get("inputs").asText()).isEqualTo(" a".repeat(4_097));
      assertThat(sent.at("/parameters/max_new_tokens").asInt()).isEqualTo(1);
    } else {
      JsonNode ids = sent.get(kind == Engine.SGLANG ? "input_ids" : "prompt");
      assertThat(ids.isArray()).isTrue();
      assertThat(ids.size()).isEqualTo(4_097);
      ids.forEach(id -> assertThat(id.asInt()).isEqualTo(100));
      String outputTokens = switch (kind) {
        case SGLANG -> "/sampling_params/max_new_tokens";
        case VLLM -> "/max_tokens";
        default -> "/n_predict";
      };
      assertThat(sent.at(outputTokens).asInt()).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} answering 200 on {1} is unsafe")
  @CsvSource({"sglang, /generate", "vllm, /v1/completions", "llamacpp, /completion", "tgi, /generate"})
  void anAnswerIsReportedByLengthAndHashOnly(String engineName, String path) {
    engine.answer(path, answer(200, "{\"text\":\"someone else's data\"}"));
    Engine kind = Engine.valueOf(engineName.toUpperCase(java.util.Locale.ROOT));

    RejectionOutcome outcome = probe.send(kind, endpoint(Duration.ofSeconds(5)), 4_097, "m");

    assertThat(outcome).isInstanceOfSatisfying(RejectionOutcome.Answered.class, a -> {
      assertThat(a.status()).isEqualTo(200);
      assertThat(a.bodyBytes()).isEqualTo(30);
      assertThat(a.bodySha256()).isEqualTo(sha256("{\"text\":\"someone else's data\"}"));
    });
    assertThat(outcome.toString()).doesNotContain("someone else");
  }

  @Test
  void aServerErrorIsAnAnswerNotARefusal() {
    engine.answer("/generate", answer(500, "{\"error\":\"CUDA error: an illegal memory access\"}"));
    assertThat(probe.send(Engine.SGLANG, endpoint(Duration.ofSeconds(5)), 10, "m"))
        .isInstanceOf(RejectionOutcome.Answered.class);
  }

  @Test
  void aRefusalThatDoesNotNameTheLengthCannotPass() {
    engine.answer("/generate", answer(401, "{\"error\":\"unauthorized\"}"));
    assertThat(probe.send(Engine.SGLANG, endpoint(Duration.ofSeconds(5)), 10, "m"))
        .isInstanceOfSatisfying(RejectionOutcome.Refused.class, r -> assertThat(r.namesLength()).isFalse());
  }

  @Test
  void aHangingEngineFailsWithinTheTimeout() {
    engine.answer("/generate", new FakeEngine.Answer(200, "application/json", "{}".getBytes(StandardCharsets.UTF_8), 10_000));
    long started = System.nanoTime();
    RejectionOutcome outcome = probe.send(Engine.SGLANG, endpoint(Duration.ofMillis(500)), 10, "m");
    assertThat(outcome).isInstanceOf(RejectionOutcome.Failed.class);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
  }

  @Test
  void enginesWithoutAnOverLimitFormFailClosed() {
    assertThat(probe.send(Engine.OLLAMA, endpoint(Duration.ofSeconds(1)), 10, "m"))
        .isInstanceOfSatisfying(RejectionOutcome.Failed.class, f -> assertThat(f.cause()).contains("no rejection probe"));
    assertThat(engine.totalHits()).isZero();
  }

  private static String sha256(String text) {
    try {
      return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OllamaProbeTest {
  private static final long WINDOW = 40_960;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new OllamaProbe(fake.http));
    }
  }

  @Test
  void theContextLengthIsTheOnlyBoundAndTheVerdictSaysSo() {
    ProbeOutcome outcome = probe(EngineShapes.ollama("0.9.7", WINDOW));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolExposed()).isFalse();
    assertThat(seen.poolTokens()).isEqualTo(WINDOW);
    assertThat(seen.engineVersion()).isEqualTo("0.9.7");
    assertThat(seen.notes())
        .contains(
            "Ollama exposes no KV pool: the loaded model's context length is used as the bound");
    PoolVerdict verdict = judge(Engine.OLLAMA, WINDOW, outcome);
    assertThat(verdict.verdict()).isEqualTo(Verdict.Verified);
    assertThat(verdict.reason()).isEqualTo(GateReason.ContextLengthSufficient);
    assertThat(verdict.message())
        .startsWith(
            "engine exposes no KV pool: its context length 40960 tokens, used as the bound");
  }

  @Test
  void aShortContextIsRefused() {
    PoolVerdict verdict = judge(Engine.OLLAMA, WINDOW, probe(EngineShapes.ollama("0.11.4", 4096)));
    assertThat(verdict.reason()).isEqualTo(GateReason.EngineContextTooShort);
    assertThat(verdict.message()).contains("engine exposes no KV pool").contains("4096 tokens");
  }

  @Test
  void withSeveralModelsLoadedTheSmallestContextCounts() {
    PoolObservation seen = observed(probe(EngineShapes.ollama("0.9.7", 131_072, 8192)));
    assertThat(seen.poolTokens()).isEqualTo(8192);
    assertThat(seen.notes()).contains("2 models loaded: the smallest context length counts");
  }

  @Test
  void olderOllamaWithoutContextLengthFailsClosed() {
    assertThat(failure(probe(EngineShapes.ollamaLegacy("0.6.2"))))
        .isEqualTo("/api/ps models[0] reports no context_length (Ollama reports it from 0.9.7)");
  }

  @Test
  void malformedOrEmptyAnswersFailClosed() {
    Map<String, Answer> none = new HashMap<>(EngineShapes.ollama("0.9.7"));
    assertThat(failure(probe(none))).startsWith("/api/ps lists no loaded model");
    assertThat(failure(probe(Map.of("/api/ps", Answer.json("{\"running\":[]}")))))
        .isEqualTo("/api/ps has no models list");
    assertThat(
            failure(
                probe(Map.of("/api/ps", Answer.json("{\"models\":[{\"context_length\":-1}]}")))))
        .isEqualTo("/api/ps models[0].context_length is -1, expected a positive token count");
  }

  @Test
  void aMissingVersionEndpointLeavesTheVersionUnreported() {
    Map<String, Answer> answers = new HashMap<>(EngineShapes.ollama("0.9.7", WINDOW));
    answers.remove("/api/version");
    assertThat(observed(probe(answers)).engineVersion()).isNull();
  }
}

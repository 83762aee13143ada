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
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import io.kvguard.verdict.VersionRules;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TgiProbeTest {
  private static final long WINDOW = 32_768;

  private static ProbeOutcome probe(Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      return fake.probe(new TgiProbe(fake.http));
    }
  }

  @Test
  void tgi22IsVerifiedFromInfoMaxBatchTotalTokens() {
    ProbeOutcome outcome = probe(EngineShapes.tgi22(WINDOW, 1_094_032, "2.2.0"));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(1_094_032);
    assertThat(seen.engineContextTokens()).hasValue(WINDOW);
    assertThat(seen.engineVersion()).isEqualTo("2.2.0");
    assertThat(seen.notes()).contains("pool from /info max_batch_total_tokens (TGI 2.2 and older)");
    assertThat(judge(Engine.TGI, WINDOW, outcome).reason()).isEqualTo(GateReason.PoolSufficient);
  }

  @Test
  void tgi3IsVerifiedFromTheMetricsGauge() {
    ProbeOutcome outcome = probe(EngineShapes.tgi3(WINDOW, 250_000, "3.0.1"));
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(250_000);
    assertThat(seen.engineVersion()).isEqualTo("3.0.1");
    assertThat(seen.notes())
        .contains("pool from /metrics tgi_batch_max_total_tokens (TGI 2.3.1 and later)");
    assertThat(judge(Engine.TGI, WINDOW, outcome).verdict()).isEqualTo(Verdict.Verified);
  }

  @Test
  void maxInputTokensIsReadForTheRejectionProbesInputCheck() {
    // /info max_input_tokens (I) sizes the T3 prompt and is the limit its refusal must state.
    assertThat(observed(probe(EngineShapes.tgi3(WINDOW, 250_000, "3.0.1"))).engineInputTokens())
        .hasValue(WINDOW - 1);
    Map<String, Answer> withoutInput =
        new java.util.HashMap<>(EngineShapes.tgi3(WINDOW, 250_000, "3.0.1"));
    withoutInput.put(
        "/info", Answer.json("{\"max_total_tokens\":" + WINDOW + ",\"version\":\"1.4.5\"}"));
    assertThat(observed(probe(withoutInput)).engineInputTokens()).isEmpty();
  }

  /**
   * backends/v3/src/lib.rs at v3.3.7: a shard that reports no measured figure (no flash attention)
   * gets --max-batch-total-tokens, or max(16000, max_total_tokens, max_batch_prefill_tokens); with
   * max_total_tokens 32,768 and the default max_batch_prefill_tokens 4,096 the router sets the
   * gauge to 32,768, which looks exactly like a measured pool that holds the window.
   */
  @Test
  void theVerdictSaysTheFigureIsOnlyAsGoodAsTheFlagForModelsWithoutFlashAttention() {
    long madeUp = Math.max(16_000, Math.max(WINDOW, 4_096));
    ProbeOutcome outcome = probe(EngineShapes.tgi3(WINDOW, madeUp, "3.3.7"));

    assertThat(observed(outcome).notes()).contains(TgiProbe.FIGURE_CAVEAT);
    PoolVerdict verdict = judge(Engine.TGI, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(verdict.message())
        .startsWith("KV pool 32768 tokens >= context window 32768")
        .contains("figure caveat: TGI measures this figure in its warm-up only for flash-attention")
        .contains("--max-batch-total-tokens")
        .endsWith("the figure is only as good as that flag");
    ProbeOutcome legacy = probe(EngineShapes.tgi22(WINDOW, 16_000, "2.2.0"));
    assertThat(observed(legacy).notes()).contains(TgiProbe.FIGURE_CAVEAT);
    assertThat(judge(Engine.TGI, WINDOW, legacy).reason()).isEqualTo(GateReason.PoolTooSmall);
  }

  @Test
  void aPoolSmallerThanTheWindowIsRefusedInEitherShape() {
    PoolVerdict tgi3 = judge(Engine.TGI, WINDOW, probe(EngineShapes.tgi3(WINDOW, 16_000, "3.0.1")));
    assertThat(tgi3.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(tgi3.message()).contains("KV pool 16000 tokens < context window 32768");
    PoolVerdict tgi22 =
        judge(Engine.TGI, WINDOW, probe(EngineShapes.tgi22(4096, 1_094_032, "2.2.0")));
    assertThat(tgi22.reason()).isEqualTo(GateReason.EngineContextTooShort);
  }

  @Test
  void tgi230ReportsThePoolNowhereAndFailsClosed() {
    Map<String, Answer> answers =
        new java.util.HashMap<>(EngineShapes.tgi3(WINDOW, 250_000, "2.3.0"));
    answers.put("/metrics", Answer.prometheus("# TYPE tgi_queue_size gauge\ntgi_queue_size 0\n"));
    assertThat(failure(probe(answers)))
        .isEqualTo(
            "TGI reports its pool neither as /info max_batch_total_tokens"
                + " (2.2 and older) nor as /metrics tgi_batch_max_total_tokens (2.3.1 and later)");
    answers.remove("/metrics");
    assertThat(failure(probe(answers))).contains("GET /metrics answered HTTP 404");
  }

  @Test
  void malformedAnswersFailClosedNamingWhatWasMissing() {
    assertThat(
            failure(
                probe(Map.of("/info", Answer.json("{\"model_id\":\"m\",\"version\":\"3.0.1\"}")))))
        .isEqualTo("/info reports no max_total_tokens");
    assertThat(failure(probe(Map.of("/info", Answer.json("{\"max_total_tokens\":4096.5}")))))
        .isEqualTo("/info.max_total_tokens is not a whole number");
    Map<String, Answer> nan = new java.util.HashMap<>(EngineShapes.tgi3(WINDOW, 1, "3.0.1"));
    nan.put("/metrics", Answer.prometheus("tgi_batch_max_total_tokens NaN\n"));
    assertThat(failure(probe(nan))).isEqualTo("/metrics tgi_batch_max_total_tokens is NaN");
    assertThat(
            failure(probe(Map.of("/info", new Answer(200, "text/html", "<html>".getBytes(), 0)))))
        .isEqualTo("GET /info answered content type text/html, expected JSON");
  }

  @Test
  void minEngineVersionRefusesAnOlderTgi() {
    PoolPolicy policy =
        new PoolPolicy(WINDOW, 1.0, false, VersionRules.of("tgi", "2.3.1", false, true));
    PoolVerdict verdict = judge(policy, probe(EngineShapes.tgi22(WINDOW, 1_094_032, "2.2.0")));
    assertThat(verdict.reason()).isEqualTo(GateReason.EngineVersionTooOld);
    assertThat(verdict.message()).isEqualTo("engine version 2.2.0 < minEngineVersion 2.3.1");
  }
}

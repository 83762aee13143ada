package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineRejection;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * What a record on the pod may stand in for: a refusal only of this process, this prompt, as the
 * engine refuses.
 */
class CarryOverTest {
  private static final Optional<EngineRejection> SGLANG =
      EngineProbes.standard(EngineHttp.createDefault()).forEngine(Engine.SGLANG).rejection();
  private static final EngineProcess PROCESS =
      new EngineProcess("engine", "containerd://a", 2, "10.0.0.7", 30000, 30000);

  /** The pod's figures now: as carried over from its record (no TGI max_input_tokens). */
  private static final PoolObservation SEEN =
      new PoolObservation(2_040_000, OptionalLong.of(1_048_576), "0.5.22", null, List.of());

  private static VerdictRecord refused(
      String container, int restarts, long prompt, Integer status, String error) {
    return new VerdictRecord(
        "serve",
        "Verified",
        "PoolSufficient",
        container,
        restarts,
        2_040_000L,
        null,
        1_048_576L,
        "0.5.22",
        null,
        container,
        prompt,
        status,
        error,
        null);
  }

  @Test
  void aRecordedRefusalCountsForTheSameProcessAndPromptAsTheEngineRefusesIt() {
    String paths =
        "paths: S1 tokenizer context-length check refused 1048576 tokens with HTTP 400 as"
            + " context-length check; S4 scheduler validate_input_length (max_req_input_len) refused"
            + " 1048570 tokens with HTTP 400 as validate_input_length";
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_100_000, 400, paths),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .contains(new RejectionOutcome.Refused(400, paths, 2_100_000));
    // A single refusal, as kvguard recorded before issue 26, never reached SGLang's scheduler
    // check.
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_100_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .isEmpty();
  }

  @Test
  void anyOtherRecordedRefusalIsNone() {
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://b", 2, 2_100_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .as("another container")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 1, 2_100_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .as("before a restart")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_000_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .as("another prompt")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_100_000, null, null),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .as("no status recorded (older kvguard)")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused(
                    "containerd://a",
                    2,
                    2_100_000,
                    400,
                    "invalid_request_error: maximum context length"),
                PROCESS,
                2_100_000,
                SEEN,
                SGLANG))
        .as("a refusal this engine's recogniser does not count")
        .isEmpty();
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        // Before issue 26: one prompt of C + margin, its class alone; now V2 and V4.
        "VLLM|400|BadRequestError: maximum context length, whole message matched|paths: V2 renderer"
            + " input-length check (N > max_model_len - max_tokens) refused 1048577 tokens with HTTP"
            + " 400 as BadRequestError: maximum context length, whole message matched; V4 engine"
            + " prompt-length check (N = max_model_len) refused 1048576 tokens with HTTP 400 as"
            + " BadRequestError: decoder prompt of max_model_len tokens, whole message matched",
        // Before: X + margin, either sentence; now T2 (and T3 where its band holds the prompt).
        "TGI|422|validation: MaxTotalTokens, whole answer matched|paths: T2 total check (N +"
            + " max_new_tokens > max_total_tokens) refused 1048577 tokens with HTTP 422 as"
            + " validation: MaxTotalTokens, whole answer matched",
        // Before: S + margin; now L1 at N = S.
        "LLAMACPP|400|exceed_context_size_error, whole answer matched|paths: L1 slot context check"
            + " (N >= n_ctx) refused 1048576 tokens with HTTP 400 as exceed_context_size_error, whole"
            + " answer matched",
      })
  void aSinglePromptsRecordNeverStandsInForThePerPathProof(
      Engine engine, int status, String single, String paths) {
    Optional<EngineRejection> rejection =
        EngineProbes.standard(EngineHttp.createDefault()).forEngine(engine).rejection();

    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 1_048_577, status, single),
                PROCESS,
                1_048_577,
                SEEN,
                rejection))
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 1_048_577, status, paths),
                PROCESS,
                1_048_577,
                SEEN,
                rejection))
        .contains(new RejectionOutcome.Refused(status, paths, 1_048_577));
  }

  @Test
  void aTgiRecordWithoutT3DoesNotStandInOnceTheFreshFiguresGiveT3ABand() {
    Optional<EngineRejection> tgi =
        EngineProbes.standard(EngineHttp.createDefault()).forEngine(Engine.TGI).rejection();
    String t2Only =
        "paths: T2 total check (N + max_new_tokens > max_total_tokens) refused 1048577 tokens with"
            + " HTTP 422 as validation: MaxTotalTokens, whole answer matched";
    // max_input_tokens 1,048,570 under a total of 1,048,576: T3's band holds I + 1, and builds
    // before the second review of issue 26 did not send it there.
    PoolObservation fresh =
        new PoolObservation(2_040_000, OptionalLong.of(1_048_576), "3.3.7", null, List.of())
            .withEngineInputTokens(1_048_570);

    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 1_048_577, 422, t2Only),
                PROCESS,
                1_048_577,
                fresh,
                tgi))
        .as("T3 was never proven on this pod: the prompts are sent again")
        .isEmpty();
  }
}

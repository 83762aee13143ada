package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineRejection;
import io.kvguard.verdict.RejectionOutcome;
import java.util.Optional;
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
                refused("containerd://a", 2, 2_100_000, 400, paths), PROCESS, 2_100_000, SGLANG))
        .contains(new RejectionOutcome.Refused(400, paths, 2_100_000));
    // A single refusal, as kvguard recorded before issue 26, never reached SGLang's scheduler
    // check.
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_100_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
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
                SGLANG))
        .as("another container")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 1, 2_100_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SGLANG))
        .as("before a restart")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_000_000, 400, "context-length check"),
                PROCESS,
                2_100_000,
                SGLANG))
        .as("another prompt")
        .isEmpty();
    assertThat(
            CarryOver.recordedRefusal(
                refused("containerd://a", 2, 2_100_000, null, null), PROCESS, 2_100_000, SGLANG))
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
                SGLANG))
        .as("a refusal this engine's recogniser does not count")
        .isEmpty();
  }
}

package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.VersionRules;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;

/**
 * A fake engine on loopback serving one engine's real answer shapes, probed the way the operator
 * probes it.
 */
final class Probing implements AutoCloseable {
  final FakeEngine engine;
  final EngineHttp http = EngineHttp.createDefault();

  Probing(Map<String, FakeEngine.Answer> answers) {
    try {
      engine = new FakeEngine().serve(answers);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  EngineEndpoint endpoint() {
    return EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(5));
  }

  ProbeOutcome probe(EngineProbe probe) {
    ProbeOutcome outcome = probe.probe(endpoint());
    String text =
        outcome instanceof ProbeOutcome.Failed failed
            ? failed.cause()
            : ((ProbeOutcome.Observed) outcome).observation().toString();
    assertThat(text)
        .as("nothing an engine says may reach a message")
        .doesNotContain(EngineShapes.SECRET_API_KEY);
    return outcome;
  }

  static PoolObservation observed(ProbeOutcome outcome) {
    assertThat(outcome).isInstanceOf(ProbeOutcome.Observed.class);
    return ((ProbeOutcome.Observed) outcome).observation();
  }

  static String failure(ProbeOutcome outcome) {
    assertThat(outcome).isInstanceOf(ProbeOutcome.Failed.class);
    return ((ProbeOutcome.Failed) outcome).cause();
  }

  /**
   * The verdict with the defaults a ModelDeployment gets: ratio 1.0, advisories on, no minimum
   * version.
   */
  static PoolVerdict judge(Engine engine, long window, ProbeOutcome outcome) {
    return judge(
        new PoolPolicy(window, 1.0, false, VersionRules.of(engine.wireName(), null, false, true)),
        outcome);
  }

  static PoolVerdict judge(PoolPolicy policy, ProbeOutcome outcome) {
    return PoolJudge.judge(policy, outcome);
  }

  @Override
  public void close() {
    engine.close();
  }
}

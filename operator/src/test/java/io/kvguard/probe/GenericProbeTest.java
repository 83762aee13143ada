package io.kvguard.probe;

import static io.kvguard.probe.Probing.failure;
import static io.kvguard.probe.Probing.judge;
import static io.kvguard.probe.Probing.observed;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.customresource.GenericVersionSource;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine.Answer;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An in-house engine: JSON stats on /stats, Prometheus on /metrics, context in /v1/models. */
class GenericProbeTest {
  private static final long WINDOW = 65_536;
  private static final String STATS =
      "{\"engine\":{\"version\":\"1.4.2\",\"kv\":{\"capacity_blocks\":8192,"
          + "\"block_size\":16},\"limits\":{\"max_prompt\":65536}},\"api_key\":\""
          + EngineShapes.SECRET_API_KEY
          + "\"}";
  private static final String METRICS =
      "# TYPE inhouse_kv_capacity_tokens gauge\n"
          + "inhouse_kv_capacity_tokens{model=\"m\",rank=\"0\"} 140000\n"
          + "inhouse_kv_capacity_tokens{model=\"m\",rank=\"1\"} 131072\n"
          + "inhouse_kv_capacity_tokens{model=\"draft\",rank=\"0\"} 4096\n";

  private static final Map<String, Answer> ENGINE =
      Map.of(
          "/stats",
          Answer.json(STATS),
          "/metrics",
          Answer.prometheus(METRICS),
          "/v1/models",
          EngineShapes.models(WINDOW));

  private static ProbeOutcome probe(GenericProbeSpec spec, Map<String, Answer> answers) {
    try (Probing fake = new Probing(answers)) {
      ProbeOutcome outcome = fake.probe(new GenericProbe(fake.http, spec));
      if (outcome instanceof ProbeOutcome.Observed) {
        assertThat(fake.engine.hits("/stats"))
            .as("each path is fetched once per probe")
            .isLessThanOrEqualTo(1);
      }
      return outcome;
    }
  }

  private static GenericValueSource pointer(String pointer, long multiplier) {
    GenericValueSource source = new GenericValueSource();
    source.setJsonPointer(pointer);
    source.setMultiplier(multiplier);
    return source;
  }

  private static GenericValueSource metric(String name, Map<String, String> labels) {
    GenericValueSource source = new GenericValueSource();
    source.setMetric(name);
    source.setLabels(labels);
    return source;
  }

  private static GenericProbeSpec json() {
    GenericProbeSpec spec = new GenericProbeSpec();
    spec.setPath("/stats");
    spec.setPool(pointer("/engine/kv/capacity_blocks", 16));
    spec.setEngineContext(pointer("/engine/limits/max_prompt", 1));
    GenericVersionSource version = new GenericVersionSource();
    version.setJsonPointer("/engine/version");
    spec.setVersion(version);
    return spec;
  }

  @Test
  void jsonPointersTimesAMultiplierGiveThePoolContextAndVersion() {
    ProbeOutcome outcome = probe(json(), ENGINE);
    PoolObservation seen = observed(outcome);
    assertThat(seen.poolTokens()).isEqualTo(131_072);
    assertThat(seen.engineContextTokens()).hasValue(WINDOW);
    assertThat(seen.engineVersion()).isEqualTo("1.4.2");
    assertThat(seen.notes())
        .contains("pool from GET /stats JSON pointer /engine/kv/capacity_blocks");
    PoolVerdict verdict = judge(Engine.GENERIC, WINDOW, outcome);
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolSufficient);
    assertThat(verdict.message()).endsWith(", engine version 1.4.2");
  }

  @Test
  void aPrometheusMetricWithLabelsCountsTheSmallestRankAndPathsCanDiffer() {
    GenericProbeSpec spec = new GenericProbeSpec();
    spec.setPath("/metrics");
    spec.setPool(metric("inhouse_kv_capacity_tokens", Map.of("model", "m")));
    GenericValueSource context = pointer("/data/0/max_model_len", 1);
    context.setPath("/v1/models");
    spec.setEngineContext(context);
    PoolObservation seen = observed(probe(spec, ENGINE));
    assertThat(seen.poolTokens()).isEqualTo(131_072);
    assertThat(seen.engineContextTokens()).hasValue(WINDOW);
    assertThat(seen.notes())
        .contains(
            "pool is the smallest of 2 series matching metric inhouse_kv_capacity_tokens{model=m}");
  }

  @Test
  void aPoolSmallerThanTheWindowIsRefused() {
    GenericProbeSpec spec = json();
    spec.getPool().setMultiplier(4L);
    PoolVerdict verdict = judge(Engine.GENERIC, WINDOW, probe(spec, ENGINE));
    assertThat(verdict.reason()).isEqualTo(GateReason.PoolTooSmall);
    assertThat(verdict.message()).contains("KV pool 32768 tokens < context window 65536");
  }

  @Test
  void aWrongPointerFailsClosedNamingThePointer() {
    GenericProbeSpec spec = json();
    spec.getPool().setJsonPointer("/engine/kv/capacity_tokens");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("GET /stats JSON pointer /engine/kv/capacity_tokens matches nothing");
    spec = json();
    spec.getVersion().setJsonPointer("/engine/kv");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("GET /stats JSON pointer /engine/kv is not a version string");
    spec = json();
    spec.getPool().setJsonPointer("engine");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("generic jsonPointer engine is not a JSON pointer (RFC 6901)");
  }

  @Test
  void malformedValuesAndSourcesFailClosed() {
    GenericProbeSpec spec = json();
    spec.getPool().setJsonPointer("/engine/version");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("GET /stats JSON pointer /engine/version is not a number (string)");
    spec = json();
    spec.getPool().setMultiplier(Long.MAX_VALUE);
    assertThat(failure(probe(spec, ENGINE))).endsWith("× multiplier 9223372036854775807 overflows");
    spec = json();
    spec.getPool().setMetric("inhouse_kv_capacity_tokens");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("generic pool must set exactly one of jsonPointer or metric");
    spec = json();
    spec.setPool(metric("inhouse_kv_capacity_tokens", Map.of("model", "absent")));
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("GET /stats answered content type application/json, expected Prometheus text");
    spec.setPath("/metrics");
    spec.getEngineContext().setPath("/stats");
    spec.getVersion().setPath("/stats");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo(
            "GET /metrics metric inhouse_kv_capacity_tokens{model=absent} matches no series");
    spec.setPool(metric("inhouse_kv_capacity_tokens", Map.of()));
    spec.setEngineContext(metric("inhouse_kv_capacity_tokens", Map.of("rank", "0")));
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo(
            "GET /metrics metric inhouse_kv_capacity_tokens{rank=0}"
                + " matches 2 series; add labels so exactly one remains");
  }

  @Test
  void aPathToAnotherHostOrNoSettingsFailClosed() {
    GenericProbeSpec spec = json();
    spec.setPath("//169.254.169.254/latest");
    assertThat(failure(probe(spec, ENGINE)))
        .isEqualTo("generic path must be an absolute path on the engine (one leading /)");
    assertThat(failure(probe(null, ENGINE)))
        .isEqualTo("engine generic needs the role's generic settings: path and pool");
  }
}

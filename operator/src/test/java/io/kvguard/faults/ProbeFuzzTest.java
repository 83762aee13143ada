package io.kvguard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.EngineResponse;
import io.kvguard.probe.GenericProbe;
import io.kvguard.probe.LlamaCppProbe;
import io.kvguard.probe.OllamaProbe;
import io.kvguard.probe.SglangProbe;
import io.kvguard.probe.TgiProbe;
import io.kvguard.probe.TrtllmProbe;
import io.kvguard.probe.VllmProbe;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Random engine answers, most of them corrupted, fed to the real probes through an in-memory
 * exchange. Invariants over every case: no probe throws, no reported pool exceeds the answer's true
 * smallest pool, and no gate opens when that true pool is below the window. The seed is fixed and
 * printed; override it with -Dkvguard.fuzz.seed=N (and the count with -Dkvguard.fuzz.cases=N) to
 * explore further.
 */
class ProbeFuzzTest {
  static final long SEED = Long.getLong("kvguard.fuzz.seed", 20_261_202L);
  static final int CASES = Integer.getInteger("kvguard.fuzz.cases", 12_000);
  static final EngineEndpoint ENDPOINT =
      EngineEndpoint.of("http", "127.0.0.1", 30000, Duration.ofSeconds(1));

  /**
   * One generated answer: what the engine's pool truly is, the window it is judged against, and its
   * pages.
   */
  record Case(long truePool, PoolPolicy policy, boolean mutated, Map<String, String> bodies) {}

  @Test
  void sglangAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    FuzzTally tally = run("sglang", SEED, SglangProbe::new, this::sglangCase, "application/json");
    assertInvariants(tally);
  }

  @Test
  void vllmAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    FuzzTally tally =
        run("vllm", SEED + 1, VllmProbe::new, this::vllmCase, "text/plain; version=0.0.4");
    assertInvariants(tally);
  }

  @Test
  void tgiAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    assertInvariants(
        run("tgi", SEED + 2, TgiProbe::new, EngineFuzzCases::tgi, "text/plain; version=0.0.4"));
  }

  @Test
  void trtllmAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    assertInvariants(
        run(
            "trtllm",
            SEED + 3,
            TrtllmProbe::new,
            EngineFuzzCases::trtllm,
            "text/plain; version=0.0.4"));
  }

  @Test
  void llamacppAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    assertInvariants(
        run("llamacpp", SEED + 4, LlamaCppProbe::new, EngineFuzzCases::llamacpp, "text/plain"));
  }

  /** Ollama has no pool: the bound under test is the loaded model's context length. */
  @Test
  void ollamaAnswersNeverOpenAGateForAContextLengthBelowTheWindow() {
    assertInvariants(
        run("ollama", SEED + 5, OllamaProbe::new, EngineFuzzCases::ollama, "text/plain"));
  }

  @Test
  void genericJsonPointerAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    assertInvariants(
        run(
            "generic-json",
            SEED + 6,
            http -> new GenericProbe(http, GenericJsonFaultEngine.spec()),
            EngineFuzzCases::genericJson,
            "text/plain"));
  }

  @Test
  void genericMetricAnswersNeverOpenAGateForAPoolBelowTheWindow() {
    assertInvariants(
        run(
            "generic-metric",
            SEED + 7,
            http -> new GenericProbe(http, GenericMetricFaultEngine.spec()),
            EngineFuzzCases::genericMetric,
            "text/plain; version=0.0.4"));
  }

  private static void assertInvariants(FuzzTally tally) {
    System.out.println(tally.summary());
    assertThat(tally.cases).isGreaterThanOrEqualTo(10_000);
    assertThat(tally.violations).as(tally.summary()).isEmpty();
    assertThat(tally.openedBelowWindow).isZero();
    assertThat(tally.poolAboveTruth).isZero();
    assertThat(tally.exceptions).isZero();
    assertThat(tally.payloadLeaks).isZero();
    assertThat(tally.boundVerifiedAsPool).isZero();
    // The generator must exercise all three outcomes, or the invariant holds vacuously.
    assertThat(tally.verified).isPositive();
    assertThat(tally.refused).isPositive();
    assertThat(tally.failed).isPositive();
    assertThat(tally.truthBelowWindow).isGreaterThan(tally.cases / 4);
  }

  private FuzzTally run(
      String engine,
      long seed,
      Function<EngineHttp, EngineProbe> probeFactory,
      Function<Random, Case> generator,
      String poolContentType) {
    Random random = new Random(seed);
    FuzzTally tally = new FuzzTally(engine, seed);
    for (int i = 0; i < CASES; i++) {
      Case c = generator.apply(random);
      EngineHttp http =
          EngineHttp.inMemory(
              (endpoint, path) -> {
                String body = c.bodies().get(path);
                if (body == null) {
                  return new EngineResponse(
                      path, 404, "application/json", "{}".getBytes(StandardCharsets.UTF_8));
                }
                String type = path.equals("/metrics") ? poolContentType : "application/json";
                return new EngineResponse(path, 200, type, body.getBytes(StandardCharsets.UTF_8));
              });
      String shown = c.bodies().toString();
      try {
        ProbeOutcome outcome = probeFactory.apply(http).probe(ENDPOINT);
        PoolVerdict verdict = PoolJudge.judge(c.policy(), outcome);
        tally.record(
            c.truePool(),
            PoolJudgeAccess.required(c.policy()),
            c.mutated(),
            outcome,
            verdict,
            shown);
        tally.checkBound(c.policy(), outcome, verdict, shown);
        if (echoesSecret(outcome, verdict)) {
          tally.leak(shown);
        }
      } catch (RuntimeException e) {
        tally.exception(e, shown);
      }
    }
    return tally;
  }

  /** Secrets the generators plant (SGLang's api_key, the generic engine's /stats api_key). */
  private static boolean echoesSecret(ProbeOutcome outcome, PoolVerdict verdict) {
    StringBuilder written = new StringBuilder(verdict.message());
    if (outcome instanceof ProbeOutcome.Observed seen) {
      written.append(seen.observation().notes()).append(seen.observation().engineVersion());
    }
    String text = written.toString();
    return text.contains("sk-fuzz")
        || text.contains(io.kvguard.testkit.EngineShapes.SECRET_API_KEY);
  }

  /**
   * A pool near the window: mostly within a factor of two either side, sometimes exactly on the
   * edge.
   */
  static long poolNear(Random random, long window) {
    switch (random.nextInt(6)) {
      case 0:
        return window;
      case 1:
        return window - 1 - random.nextInt(64);
      case 2:
        return window + random.nextInt(64);
      default:
        return Math.max(1, (long) (window * (0.4 + random.nextDouble() * 2.0)));
    }
  }

  static long window(Random random) {
    long[] windows = {32_768, 131_072, 262_144, 1_048_576, 4_194_304};
    return windows[random.nextInt(windows.length)];
  }

  static PoolPolicy policy(Random random, long window) {
    double ratio = random.nextInt(4) == 0 ? 1.0 + random.nextInt(5) * 0.25 : 1.0;
    return new PoolPolicy(window, ratio, random.nextInt(5) == 0);
  }

  static int mutations(Random random) {
    int roll = random.nextInt(10);
    return roll < 2 ? 0 : roll < 6 ? 1 : roll < 9 ? 2 : 3;
  }

  private Case sglangCase(Random random) {
    long window = window(random);
    int ranks = 1 + random.nextInt(4);
    long[] pools = LongStream.range(0, ranks).map(r -> poolNear(random, window)).toArray();
    if (ranks > 1 && random.nextBoolean()) {
      pools[random.nextInt(ranks)] =
          Math.max(1, window / 2); // the one small rank of the incident family
    }
    long truth = LongStream.of(pools).min().orElseThrow();
    long engineContext = random.nextBoolean() ? window : poolNear(random, window);
    boolean legacy = ranks == 1 && random.nextInt(5) == 0;
    String states =
        LongStream.of(pools)
            .mapToObj(
                p ->
                    legacy
                        ? "{\"last_gen_throughput\":0.0}"
                        : "{\"memory_usage\":{\"weight\":88.1,\"kvcache\":41.3,\"token_capacity\":"
                            + p
                            + ",\"graph\":1.2},"
                            + "\"last_gen_throughput\":0.0,\"effective_max_running_requests_per_dp\":64}")
            .collect(Collectors.joining(","));
    String info =
        "{\"model_path\":\"zai-org/GLM-5.3\",\"context_length\":"
            + (random.nextBoolean() ? "null" : engineContext)
            + ",\"disaggregation_mode\":\""
            + new String[] {"null", "prefill", "decode"}[random.nextInt(3)]
            + "\",\"dp_size\":"
            + ranks
            + ",\"tp_size\":8,\"dcp_size\":1,\"page_size\":64,\"api_key\":\"sk-fuzz\",\"max_total_num_tokens\":"
            + pools[0]
            + ",\"max_req_input_len\":"
            + (Math.min(engineContext, pools[0]) - 6)
            + ",\"status\":\"ready\",\"version\":\"0.5.22\","
            + "\"internal_states\":"
            + (ranks == 1 && random.nextBoolean() ? states : "[" + states + "]")
            + "}";
    String models =
        "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":"
            + engineContext
            + "}]}";
    JsonMutator mutator = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      if (random.nextInt(5) == 0) {
        models = mutator.mutate(models);
      } else {
        info = mutator.mutate(info);
      }
    }
    String path = random.nextInt(4) == 0 ? "/get_server_info" : "/server_info";
    return new Case(truth, policy(random, window), n > 0, Map.of(path, info, "/v1/models", models));
  }

  private Case vllmCase(Random random) {
    long window = window(random);
    int engines = 1 + random.nextInt(4);
    long blockSize = new long[] {16, 32, 64}[random.nextInt(3)];
    boolean sized = random.nextInt(10) < 7;
    long[] pools = new long[engines];
    long[] blocks = new long[engines];
    for (int e = 0; e < engines; e++) {
      pools[e] = poolNear(random, window);
      blocks[e] = Math.max(1, pools[e] / blockSize);
      if (!sized) {
        pools[e] =
            blocks[e] * blockSize; // what the engine really holds when only blocks are exported
      }
    }
    long truth = LongStream.of(pools).min().orElseThrow();
    long summedBlocks =
        LongStream.of(blocks).sum(); // vLLM sums num_gpu_blocks across data-parallel engines
    StringBuilder metrics =
        new StringBuilder(
            "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                + "# TYPE vllm:cache_config_info gauge\n");
    for (int e = 0; e < engines; e++) {
      // Hybrid models: blocks x block size overstates the pool; only kv_cache_size_tokens is right.
      // Kept to data-parallel answers, where dropping the label from one series cannot pass for an
      // older build.
      long exported =
          sized && engines > 1 && random.nextBoolean() ? summedBlocks * 3 : summedBlocks;
      metrics
          .append(PrometheusMutator.CACHE)
          .append("{block_size=\"")
          .append(blockSize)
          .append("\",cache_dtype=\"auto\",enable_prefix_caching=\"True\"")
          .append(engines > 1 || random.nextBoolean() ? ",engine=\"" + e + "\"" : "")
          .append(",gpu_memory_utilization=\"0.9\"")
          .append(sized ? ",kv_cache_size_tokens=\"" + pools[e] + "\"" : "")
          .append(",num_gpu_blocks=\"")
          .append(sized && engines == 1 ? Math.min(exported, pools[e] / blockSize) : exported)
          .append("\",num_gpu_blocks_override=\"None\"} 1.0\n");
    }
    metrics.append("# TYPE vllm:num_requests_running gauge\n");
    for (int e = 0; e < engines; e++) {
      // vLLM labels its per-engine series with the engine index, so every engine shows up more than
      // once.
      metrics
          .append("vllm:num_requests_running{engine=\"")
          .append(e)
          .append("\",model_name=\"m\"} 0.0\n");
    }
    long maxModelLen = random.nextBoolean() ? window : poolNear(random, window);
    String models =
        "{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\",\"max_model_len\":"
            + maxModelLen
            + "}]}";
    String text = metrics.toString();
    PrometheusMutator prometheus = new PrometheusMutator(random);
    JsonMutator json = new JsonMutator(random);
    int n = mutations(random);
    for (int i = 0; i < n; i++) {
      if (random.nextInt(5) == 0) {
        models = json.mutate(models);
      } else {
        text = prometheus.mutate(text);
      }
    }
    return new Case(
        truth,
        policy(random, window),
        n > 0,
        Map.of("/metrics", text, "/v1/models", models, "/version", "{\"version\":\"0.11.0\"}"));
  }
}

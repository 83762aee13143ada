package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.verdict.ProbeMarker;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionOutcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, engines that answer to hurt: answers are read as streams and only what a probe reads is
 * kept, the parser refuses what no engine sends, the default cap is below a junk page, one deadline
 * covers a whole probe, and the rejection prompt is streamed and capped.
 */
class HostileAnswersTest {
  private static final long WINDOW = 1_048_576;

  /** vLLM's page plus {@code junkLines} one-sample series of other names: about 34 bytes a line. */
  static String junkPage(int junkLines) {
    StringBuilder page =
        new StringBuilder(
            new String(
                EngineShapes.vllm(WINDOW, 127_500, 16, 2_040_000L).get("/metrics").body(),
                StandardCharsets.UTF_8));
    for (int i = 0; i < junkLines; i++) {
      page.append("junk_series_").append(i).append("{a=\"b\"} 1\n");
    }
    return page.toString();
  }

  private static Map<String, FakeEngine.Answer> vllmWith(String page) {
    Map<String, FakeEngine.Answer> answers =
        new java.util.LinkedHashMap<>(EngineShapes.vllm(WINDOW, 127_500, 16, 2_040_000L));
    answers.put("/metrics", FakeEngine.Answer.prometheus(page));
    return answers;
  }

  @Test
  void aPageOfJunkSeriesKeepsOnlyTheSeriesTheProbeReads() throws Exception {
    String page = junkPage(130_000);
    assertThat(page.length()).isGreaterThan(3_400_000);
    try (Probing probing = new Probing(vllmWith(page))) {
      EngineHttp generous = new EngineHttp(EngineHttp.newHttpClient(), 8 * 1024 * 1024);

      EngineResponse response =
          generous.getOk(
              probing.endpoint(),
              "/metrics",
              Reading.metrics(VllmProbe.CACHE_CONFIG).withCensus("vllm:", "engine"));

      assertThat(response.length()).isEqualTo(page.length());
      assertThat(PrometheusText.parse(response)).hasSize(1);
      assertThat(PrometheusText.census(response)).containsExactly("0");
      assertThat(response.body()).as("no byte of the page is held").isEmpty();
      assertThat(Probing.observed(new VllmProbe(generous).probe(probing.endpoint())).poolTokens())
          .isEqualTo(2_040_000);
    }
  }

  @Test
  void theDefaultCapRefusesAJunkPageLargerThanAnyEngineServes() {
    try (Probing probing = new Probing(vllmWith(junkPage(130_000)))) {
      assertThat(EngineHttp.DEFAULT_MAX_BODY_BYTES).isEqualTo(2 * 1024 * 1024);
      assertThat(Probing.failure(probing.probe(new VllmProbe(probing.http))))
          .contains("GET /metrics failed: answer larger than 2097152 bytes");
    }
  }

  @Test
  void aJsonAnswerKeepsOnlyThePathsTheProbeReads() throws Exception {
    Map<String, FakeEngine.Answer> answers =
        new java.util.LinkedHashMap<>(
            EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000, 2_040_000));
    String info = new String(answers.get("/server_info").body(), StandardCharsets.UTF_8);
    String junk = "\"junk\":[" + "1,".repeat(300_000) + "1],";
    answers.put("/server_info", FakeEngine.Answer.json("{" + junk + info.substring(1)));
    try (Probing probing = new Probing(answers)) {
      EngineResponse response =
          probing.http.getOk(probing.endpoint(), "/server_info", SglangProbe.SERVER_INFO_READING);

      JsonNode kept = StrictJson.parse(response);
      List<String> fields = new ArrayList<>();
      kept.fieldNames().forEachRemaining(fields::add);
      assertThat(fields)
          .containsExactlyInAnyOrder(
              "internal_states",
              "dp_size",
              "dcp_size",
              "tp_size",
              "max_total_num_tokens",
              "version",
              "disaggregation_mode");
      assertThat(kept.get("internal_states").get(1).toString())
          .isEqualTo("{\"memory_usage\":{\"token_capacity\":2040000}}");
      assertThat(Probing.observed(probing.probe(new SglangProbe(probing.http))).poolTokens())
          .isEqualTo(2_040_000);
    }
  }

  @Test
  void jsonNestedDeeperThanAnyEngineIsRefused() {
    Map<String, FakeEngine.Answer> answers =
        new java.util.LinkedHashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    String info = new String(answers.get("/server_info").body(), StandardCharsets.UTF_8);
    answers.put(
        "/server_info",
        FakeEngine.Answer.json(
            "{\"deep\":" + "[".repeat(200) + "]".repeat(200) + "," + info.substring(1)));
    try (Probing probing = new Probing(answers)) {
      assertThat(Probing.failure(probing.probe(new SglangProbe(probing.http))))
          .contains("GET /server_info answered JSON beyond kvguard's parser limits")
          .contains("nesting depth");
    }
  }

  @Test
  void tooManyKeptValuesFailTheProbe() {
    StringBuilder models = new StringBuilder("{\"object\":\"list\",\"data\":[");
    for (int i = 0; i < SelectiveJson.MAX_KEPT_VALUES; i++) {
      models.append(i == 0 ? "" : ",").append("{\"id\":\"m\",\"max_model_len\":1048576}");
    }
    Map<String, FakeEngine.Answer> answers =
        new java.util.LinkedHashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    answers.put("/v1/models", FakeEngine.Answer.json(models.append("]}").toString()));
    try (Probing probing = new Probing(answers)) {
      assertThat(Probing.failure(probing.probe(new SglangProbe(probing.http))))
          .contains(
              "GET /v1/models answered more than 10000 JSON values on the paths kvguard reads");
    }
  }

  @Test
  void oneDeadlineCoversEveryRequestOfAProbe() {
    Map<String, FakeEngine.Answer> answers =
        new java.util.LinkedHashMap<>(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000));
    answers.replaceAll((path, answer) -> answer.delayedBy(700));
    try (Probing probing = new Probing(answers)) {
      EngineEndpoint endpoint =
          EngineEndpoint.of("http", "127.0.0.1", probing.engine.port(), Duration.ofSeconds(1));
      // Each request alone fits its second; the two together do not, and the probe is one second
      // long.
      assertThat(new SglangProbe(probing.http).probe(endpoint))
          .isInstanceOf(ProbeOutcome.Observed.class);
      assertThat(Probing.failure(new SglangProbe(probing.http).probe(endpoint.startingNow())))
          .contains("GET /v1/models timed out after 1000 ms");
    }
  }

  private static io.kvguard.verdict.PoolObservation unified(long tokens) {
    return new io.kvguard.verdict.PoolObservation(
        tokens, java.util.OptionalLong.of(tokens), "1.0.0", null, List.of());
  }

  private static OverLimitPrompt prompt(java.util.Optional<EngineRejection> engine, long tokens) {
    EngineRejection.Plan plan =
        engine.orElseThrow().plan(tokens, "m", unified(tokens), EngineRejection.Route.POD);
    return ((EngineRejection.Plan.Send) plan).prompt();
  }

  @Test
  void aPromptAboveTheCapIsNeverSentAndSaysWhy() throws Exception {
    try (FakeEngine engine = new FakeEngine()) {
      RejectionProbe probe = new RejectionProbe(EngineHttp.createDefault(), 1_000);
      EngineEndpoint endpoint =
          EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(5));

      RejectionOutcome outcome =
          probe.send(
              new TgiProbe(EngineHttp.createDefault()).rejection(),
              "tgi",
              endpoint,
              30_000_001,
              "m",
              unified(30_000_000).withEngineInputTokens(29_999_999),
              EngineRejection.Route.POD);

      assertThat(outcome)
          .isInstanceOfSatisfying(
              RejectionOutcome.Inconclusive.class,
              inconclusive ->
                  assertThat(inconclusive.cause())
                      .contains(
                          "30000001-token prompt ("
                              + TgiRejection.T2
                              + "), above KVGUARD_REJECTION_MAX_PROMPT_TOKENS (1000)")
                      .contains("raise the limit"));
      assertThat(engine.totalHits()).isZero();
    }
  }

  @Test
  void thePromptIsProducedAsItIsSentWithItsExactLength() throws Exception {
    OverLimitPrompt small = prompt(new SglangProbe(EngineHttp.createDefault()).rejection(), 3);
    assertThat(new String(small.body(), StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"input_ids\":[100,100,100],\"sampling_params\":{\"max_new_tokens\":1},\"stream\":false}");
    assertThat(small.contentLength()).isEqualTo(small.body().length);
    OverLimitPrompt tgi = prompt(new TgiProbe(EngineHttp.createDefault()).rejection(), 3);
    assertThat(new String(tgi.body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"inputs\":\" a a a\",\"parameters\":{\"max_new_tokens\":1}}");
    OverLimitPrompt huge =
        prompt(new VllmProbe(EngineHttp.createDefault()).rejection(), 30_000_000);
    assertThat(huge.contentLength())
        .isEqualTo(4L * 30_000_000 - 1 + huge.prefix().length() + huge.suffix().length());

    try (FakeEngine engine = new FakeEngine()) {
      // SGLang v0.5.18 with a 2,000,001-token context: S1 at 2,000,001 tokens, S4 at M = C − 6.
      engine.serve(io.kvguard.testkit.EngineShapes.sglang(2_000_001, null, "0.5.18", 2_000_002));
      engine.answerBy(
          "/generate",
          io.kvguard.testkit.EngineShapes.sglangGenerate(
              2_000_001,
              1_999_995,
              n -> io.kvguard.testkit.EngineShapes.refusesBand(n, 1_999_995)));
      RejectionOutcome outcome =
          new RejectionProbe(EngineHttp.createDefault())
              .send(
                  new SglangProbe(EngineHttp.createDefault()).rejection(),
                  "sglang",
                  EngineEndpoint.of("http", "127.0.0.1", engine.port(), Duration.ofSeconds(30)),
                  2_000_001,
                  "m",
                  new io.kvguard.verdict.PoolObservation(
                      2_000_002, java.util.OptionalLong.of(2_000_001), "0.5.18", null, List.of()),
                  EngineRejection.Route.POD);

      assertThat(outcome).isInstanceOf(RejectionOutcome.Refused.class);
      JsonNode sent = new ObjectMapper().readTree(engine.lastBody("/generate"));
      assertThat(sent.get("input_ids").size()).isEqualTo(1_999_995);
      assertThat(engine.hits("/generate")).isEqualTo(2);
      Iterator<JsonNode> ids = sent.get("input_ids").elements();
      for (int i = 0; i < ProbeMarker.SYMBOLS; i++) {
        assertThat(ids.next().asLong())
            .as("the marker's token IDs first")
            .isBetween(
                ProbeMarker.FIRST_TOKEN_ID, ProbeMarker.FIRST_TOKEN_ID + ProbeMarker.ALPHABET - 1);
      }
      assertThat(ids.next().asInt()).isEqualTo(OverLimitPrompt.TOKEN_ID);
    }
  }

  @Test
  void theMarkerReplacesFillerUnitsAndChangesNoLength() {
    ProbeMarker marker = new ProbeMarker(ProbeMarker.CODES - 1); // every symbol the last: "z", 125
    OverLimitPrompt sglang =
        prompt(new SglangProbe(EngineHttp.createDefault()).rejection(), 10).marked(marker);
    assertThat(new String(sglang.body(), StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"input_ids\":[125,125,125,125,125,125,125,125,100,100],"
                + "\"sampling_params\":{\"max_new_tokens\":1},\"stream\":false}");
    OverLimitPrompt tgi =
        prompt(new TgiProbe(EngineHttp.createDefault()).rejection(), 10).marked(marker);
    assertThat(new String(tgi.body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"inputs\":\" z z z z z z z z a a\",\"parameters\":{\"max_new_tokens\":1}}");
    OverLimitPrompt shortOne =
        prompt(new SglangProbe(EngineHttp.createDefault()).rejection(), 3).marked(marker);
    assertThat(new String(shortOne.body(), StandardCharsets.UTF_8))
        .as("a prompt shorter than a marker carries its first symbols only")
        .startsWith("{\"input_ids\":[125,125,125],");
    for (String engine : List.of("sglang", "vllm", "tgi", "llamacpp")) {
      java.util.Optional<EngineRejection> rejection =
          switch (engine) {
            case "sglang" -> new SglangProbe(EngineHttp.createDefault()).rejection();
            case "vllm" -> new VllmProbe(EngineHttp.createDefault()).rejection();
            case "tgi" -> new TgiProbe(EngineHttp.createDefault()).rejection();
            default -> new LlamaCppProbe(EngineHttp.createDefault()).rejection();
          };
      OverLimitPrompt plain = prompt(rejection, 1_000);
      OverLimitPrompt marked = plain.marked(new ProbeMarker(12_345_678_901L));
      assertThat(marked.tokens()).as(engine).isEqualTo(plain.tokens());
      assertThat(marked.contentLength()).as(engine).isEqualTo(plain.contentLength());
      assertThat(marked.body().length).as(engine).isEqualTo(plain.body().length);
    }
  }

  @Test
  void aMarkedPromptNeverShowsItsMarkerWhenPrinted() {
    // ProbeMarker hides its value; the prompt carrying it must not undo that in a log line or an
    // assertion message.
    ProbeMarker marker = new ProbeMarker(ProbeMarker.CODES - 1); // "z" and 125 eight times
    OverLimitPrompt ids =
        prompt(new SglangProbe(EngineHttp.createDefault()).rejection(), 10).marked(marker);
    OverLimitPrompt words =
        prompt(new TgiProbe(EngineHttp.createDefault()).rejection(), 10).marked(marker);

    assertThat(ids.toString()).doesNotContain("125").contains("/generate", "8 marker units");
    assertThat(words.toString()).doesNotContain(" z").contains("8 marker units");
  }
}

package io.kvguard.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;

import io.kvguard.faults.FaultEngine.ContentFault;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineHttp;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import io.kvguard.verdict.VersionRules;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way an engine answer can go wrong, against every engine's probe: each row must end as
 * ProbeFailed with a message naming the cause, throw nothing, and return within the probe deadline
 * plus a little. Rows are (engine x fault); transport faults are written once for all engines,
 * content faults are rendered by each engine in its own format ({@link FaultEngine#content}).
 */
class ProbeFaultTableTest {
  static final long WINDOW = 1_048_576;
  static final Duration TIMEOUT = Duration.ofMillis(1_000);
  static final Duration SLACK = Duration.ofMillis(1_500);
  static final int BODY_LIMIT = 64 * 1024;
  static final long HUGE_BODY = 16L * 1024 * 1024;
  static final PoolPolicy POLICY = new PoolPolicy(WINDOW, 1.0, false);
  static final List<FaultEngine> ENGINES =
      List.of(
          new SglangFaultEngine(),
          new VllmFaultEngine(),
          new Tgi22FaultEngine(),
          new Tgi3FaultEngine(),
          new TrtllmFaultEngine(),
          new LlamaCppFaultEngine(),
          new OllamaFaultEngine(),
          new GenericJsonFaultEngine(),
          new GenericMetricFaultEngine());

  /** Body bytes the engine of the size-limit row got into the socket before the probe hung up. */
  private static final AtomicLong HUGE_SENT = new AtomicLong();

  private static RawEngine trap;

  /**
   * Speaks TLS with a certificate no client trusts; every https row against it must fail the
   * handshake.
   */
  private static RawEngine selfSigned;

  /**
   * What one row sets up; {@code port} overrides the engine's port (a closed port), {@code scheme}
   * http(s).
   */
  record Scenario(
      Map<String, RawEngine.Behaviour> routes,
      String cause,
      Optional<Integer> port,
      String scheme) {
    static Scenario of(FaultEngine.Fault fault) {
      return new Scenario(fault.routes(), fault.cause(), Optional.empty(), "http");
    }
  }

  /** A transport-level fault, written once: it replaces the answer of one path of any engine. */
  record Row(
      String name, Predicate<FaultEngine> appliesTo, Function<FaultEngine, Scenario> scenario) {
    Row(String name, Function<FaultEngine, Scenario> scenario) {
      this(name, engine -> true, scenario);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  private static Scenario onPool(FaultEngine engine, RawEngine.Behaviour behaviour, String cause) {
    return onPath(engine, engine.poolPath(), behaviour, cause);
  }

  private static Scenario onPath(
      FaultEngine engine, String path, RawEngine.Behaviour behaviour, String cause) {
    Map<String, RawEngine.Behaviour> routes = engine.healthy();
    routes.put(path, behaviour);
    return new Scenario(routes, cause, Optional.empty(), "http");
  }

  static List<Row> transportFaults() {
    List<Row> rows = new ArrayList<>();
    rows.add(
        new Row(
            "connection refused",
            e ->
                new Scenario(
                    e.healthy(), "connection refused", Optional.of(closedPort()), "http")));
    rows.add(
        new Row(
            "reset (RST) mid-body",
            e ->
                onPool(
                    e,
                    RawEngine.resetMidBody(
                        e.poolContentType(), e.poolBody(), e.poolBody().length / 2),
                    "failed: I/O error")));
    rows.add(
        new Row(
            "connection closed before Content-Length reached",
            e ->
                onPool(
                    e,
                    RawEngine.closeMidBody(
                        e.poolContentType(), e.poolBody(), e.poolBody().length / 2),
                    "failed: I/O error")));
    rows.add(new Row("timeout before headers", e -> onPool(e, RawEngine.silent(), "timed out")));
    rows.add(
        new Row(
            "partial headers, then silence",
            e -> onPool(e, RawEngine.partialHeaders(), "timed out")));
    rows.add(
        new Row(
            "slow body drip past the deadline",
            e -> onPool(e, RawEngine.drip(e.poolContentType(), e.poolBody(), 100), "timed out")));
    for (int status : new int[] {401, 403, 429, 500, 503}) {
      rows.add(
          new Row(
              "HTTP " + status,
              e ->
                  onPool(
                      e,
                      RawEngine.answer(status, e.poolContentType(), e.poolBody()),
                      "answered HTTP " + status)));
    }
    rows.add(
        new Row(
            "HTTP 404 on the pool path (SGLang: every server_info path)",
            e ->
                onPool(
                    e,
                    RawEngine.answer(
                        404, "application/json", "{}".getBytes(StandardCharsets.UTF_8)),
                    "answered HTTP 404")));
    for (int status : new int[] {301, 302, 307, 308}) {
      rows.add(
          new Row(
              "redirect " + status + " (not followed)",
              e ->
                  onPool(
                      e,
                      RawEngine.redirect(status, "http://127.0.0.1:" + trap.port() + e.poolPath()),
                      "answered HTTP " + status + " (redirects are not followed)")));
    }
    rows.add(
        new Row(
            "wrong content type",
            e ->
                onPool(
                    e,
                    RawEngine.answer(200, e.wrongContentType(), e.poolBody()),
                    "answered content type")));
    rows.add(
        new Row(
            "no content type",
            e ->
                onPool(
                    e, RawEngine.answer(200, null, e.poolBody()), "answered content type none")));
    rows.add(
        new Row(
            "empty body",
            e ->
                onPool(
                    e,
                    RawEngine.answer(200, e.poolContentType(), new byte[0]),
                    "answered an empty body")));
    rows.add(
        new Row(
            "body over the size limit (16 MiB, limit 64 KiB)",
            e ->
                onPool(
                    e,
                    RawEngine.huge(e.poolContentType(), HUGE_BODY, HUGE_SENT),
                    "answer larger than " + BODY_LIMIT + " bytes")));
    rows.add(
        new Row(
            "TLS: https to a plain-HTTP server",
            e -> new Scenario(e.healthy(), "TLS failure", Optional.empty(), "https")));
    rows.add(
        new Row(
            "TLS: self-signed certificate",
            e ->
                new Scenario(e.healthy(), "TLS failure", Optional.of(selfSigned.port()), "https")));
    Predicate<FaultEngine> hasContextPath = e -> e.contextPath().isPresent();
    rows.add(
        new Row(
            "HTTP 500 on the engine-context path",
            hasContextPath,
            e ->
                onPath(
                    e,
                    e.contextPath().orElseThrow(),
                    RawEngine.answer(
                        500, "application/json", "{}".getBytes(StandardCharsets.UTF_8)),
                    "GET " + e.contextPath().orElseThrow() + " answered HTTP 500")));
    rows.add(
        new Row(
            "timeout on the engine-context path",
            hasContextPath,
            e ->
                onPath(
                    e,
                    e.contextPath().orElseThrow(),
                    RawEngine.silent(),
                    "GET " + e.contextPath().orElseThrow() + " timed out")));
    return rows;
  }

  static Stream<Arguments> rows() {
    List<Arguments> all = new ArrayList<>();
    for (FaultEngine engine : ENGINES) {
      for (Row row : transportFaults()) {
        if (!row.appliesTo().test(engine)) {
          continue;
        }
        all.add(
            Arguments.of(
                engine.name(),
                row.name(),
                (Function<FaultEngine, Scenario>) row.scenario(),
                engine));
      }
      for (ContentFault fault : ContentFault.values()) {
        engine
            .content(fault)
            .ifPresent(
                f ->
                    all.add(
                        Arguments.of(
                            engine.name(),
                            fault.name().toLowerCase().replace('_', ' '),
                            (Function<FaultEngine, Scenario>) e -> Scenario.of(f),
                            engine)));
      }
    }
    return all.stream();
  }

  @BeforeAll
  static void startTrap() throws Exception {
    trap = new RawEngine();
    selfSigned = new RawEngine(SelfSignedTls.serverSockets());
  }

  @AfterAll
  static void stopTrap() {
    trap.close();
    selfSigned.close();
  }

  private static int closedPort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static EngineHttp smallLimitHttp() {
    HttpClient client =
        HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(TIMEOUT)
            .version(HttpClient.Version.HTTP_1_1)
            .build();
    return new EngineHttp(client, BODY_LIMIT);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("rows")
  void everyFaultFailsTheProbeAndNamesItsCause(
      String engineName, String fault, Function<FaultEngine, Scenario> build, FaultEngine engine)
      throws IOException {
    try (RawEngine server = new RawEngine()) {
      HUGE_SENT.set(0);
      Scenario scenario = build.apply(engine);
      server.routes(scenario.routes());
      int port = scenario.port().orElse(server.port());
      EngineEndpoint endpoint =
          new EngineEndpoint(
              URI.create(scenario.scheme() + "://127.0.0.1:" + port), TIMEOUT, Optional.empty());
      int trapHitsBefore = trap.requested().size();

      long started = System.nanoTime();
      ProbeOutcome outcome =
          assertDoesNotThrow(() -> engine.probe(smallLimitHttp()).probe(endpoint));
      Duration took = Duration.ofNanos(System.nanoTime() - started);

      assertThat(outcome).isInstanceOf(ProbeOutcome.Failed.class);
      String cause = ((ProbeOutcome.Failed) outcome).cause();
      assertThat(cause).contains(scenario.cause());
      PoolVerdict verdict = PoolJudge.judge(POLICY, outcome);
      assertThat(verdict.verdict()).isEqualTo(Verdict.Unknown);
      assertThat(verdict.reason()).isEqualTo(GateReason.ProbeFailed);
      assertThat(GateDecision.of(verdict, false).open()).isFalse();
      assertThat(took).isLessThan(TIMEOUT.plus(SLACK));
      assertThat(trap.requested())
          .as("a redirect target must never be requested")
          .hasSize(trapHitsBefore);
      assertThat(cause).doesNotContain(io.kvguard.testkit.EngineShapes.SECRET_API_KEY);
      if (fault.startsWith("body over the size limit")) {
        // Bounded read: the probe stopped reading long before the engine finished sending.
        assertThat(HUGE_SENT.get()).isLessThan(HUGE_BODY);
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void theHealthyAnswerOfEachEngineIsVerifiedSoTheTableCanFail(
      String engineName, FaultEngine engine) throws IOException {
    try (RawEngine server = new RawEngine()) {
      server.routes(engine.healthy());
      EngineEndpoint endpoint =
          new EngineEndpoint(
              URI.create("http://127.0.0.1:" + server.port()), TIMEOUT, Optional.empty());
      ProbeOutcome outcome = engine.probe(smallLimitHttp()).probe(endpoint);
      assertThat(outcome).isInstanceOf(ProbeOutcome.Observed.class);
      PoolPolicy policy =
          new PoolPolicy(
              WINDOW, 1.0, false, VersionRules.NONE, engine.needsBlockCountDeclaration());
      assertThat(PoolJudge.judge(policy, outcome).verdict()).isEqualTo(Verdict.Verified);
      assertThat(((ProbeOutcome.Observed) outcome).observation().poolTokens())
          .isEqualTo(SglangFaultEngine.POOL);
    }
  }

  static Stream<Arguments> engines() {
    return ENGINES.stream().map(e -> Arguments.of(e.name(), e));
  }
}

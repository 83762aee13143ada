package io.kvguard.faults;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.Scheme;
import io.kvguard.testing.OperatorHarness;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Representative rows of the probe fault table, end to end: the operator as production wires it,
 * pods pointing at raw-socket engines that misbehave. Each pod's gate must stay False with reason
 * ProbeFailed and a message naming the cause, and nothing may escape the reconciler as an error.
 */
class ProbeFaultGateIT {
  private static final int BODY_LIMIT = 64 * 1024;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final AtomicLong hugeSent = new AtomicLong();
  private OperatorHarness h;
  private RawEngine reset;
  private RawEngine tls;
  private RawEngine redirect;
  private RawEngine trap;
  private RawEngine huge;
  private RawEngine drip;

  @BeforeEach
  void start() throws IOException {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    logs.start();
    root.addAppender(logs);
    SglangFaultEngine sglang = new SglangFaultEngine();
    VllmFaultEngine vllm = new VllmFaultEngine();
    reset =
        new RawEngine()
            .routes(sglang.healthy())
            .route(
                "/server_info", RawEngine.resetMidBody("application/json", sglang.poolBody(), 40));
    tls = new RawEngine().routes(sglang.healthy());
    trap = new RawEngine().routes(vllm.healthy());
    redirect =
        new RawEngine()
            .routes(vllm.healthy())
            .route(
                "/metrics",
                RawEngine.redirect(302, "http://127.0.0.1:" + trap.port() + "/metrics"));
    huge =
        new RawEngine()
            .routes(vllm.healthy())
            .route("/metrics", RawEngine.huge(vllm.poolContentType(), 16L * 1024 * 1024, hugeSent));
    drip =
        new RawEngine()
            .routes(sglang.healthy())
            .route(
                "/v1/models",
                RawEngine.drip(
                    "application/json", "{\"object\":\"list\",\"data\":[]}".getBytes(), 200));
    KvguardConfig production = OperatorHarness.productionConfig();
    h =
        new OperatorHarness()
            .start(
                new KvguardConfig(
                    production.namespaces(),
                    production.metricsPort(),
                    production.leaderElection(),
                    production.leaseNamespace(),
                    production.probeConcurrency(),
                    BODY_LIMIT,
                    production.identity()));
  }

  @AfterEach
  void stop() {
    h.close();
    for (RawEngine engine : new RawEngine[] {reset, tls, redirect, trap, huge, drip}) {
      engine.close();
    }
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
  }

  private static RoleSpec roleOf(String name, Engine engine, Scheme scheme) {
    RoleSpec role = role(name, engine, Map.of("fault", name));
    role.setScheme(scheme);
    return role;
  }

  @Test
  void misbehavingEnginesKeepTheirGatesShutWithTheCauseInTheMessage() {
    h.pods.createRunning(
        OperatorHarness.NAMESPACE, "reset-0", Map.of("fault", "reset"), reset.port(), true);
    h.pods.createRunning(
        OperatorHarness.NAMESPACE, "tls-0", Map.of("fault", "tls"), tls.port(), true);
    h.pods.createRunning(
        OperatorHarness.NAMESPACE,
        "redirect-0",
        Map.of("fault", "redirect"),
        redirect.port(),
        true);
    h.pods.createRunning(
        OperatorHarness.NAMESPACE, "huge-0", Map.of("fault", "huge"), huge.port(), true);
    h.pods.createRunning(
        OperatorHarness.NAMESPACE, "drip-0", Map.of("fault", "drip"), drip.port(), true);
    ModelDeployment md =
        h.modelDeployment(
            "faults",
            ProbeFaultTableTest.WINDOW,
            roleOf("reset", Engine.SGLANG, Scheme.HTTP),
            roleOf("tls", Engine.SGLANG, Scheme.HTTPS),
            roleOf("redirect", Engine.VLLM, Scheme.HTTP),
            roleOf("huge", Engine.VLLM, Scheme.HTTP),
            roleOf("drip", Engine.SGLANG, Scheme.HTTP));
    ProbeSpec probe = new ProbeSpec();
    probe.setTimeoutSeconds(1);
    md.getSpec().setProbe(probe);
    h.create(md);

    Map<String, String> causes =
        Map.of(
            "reset-0", "GET /server_info failed: I/O error",
            "tls-0", "TLS failure",
            "redirect-0", "GET /metrics answered HTTP 302 (redirects are not followed)",
            "huge-0", "answer larger than " + BODY_LIMIT + " bytes",
            "drip-0", "GET /v1/models timed out after 1000 ms");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                causes.forEach(
                    (pod, cause) -> {
                      assertThat(h.gate(pod))
                          .as(pod)
                          .hasValueSatisfying(
                              c -> {
                                assertThat(c.getStatus()).isEqualTo("False");
                                assertThat(c.getReason()).isEqualTo("ProbeFailed");
                                assertThat(c.getMessage()).contains(cause);
                              });
                      assertThat(h.labelled(pod)).isFalse();
                    }));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              ModelDeployment status = h.get("faults");
              assertThat(status.getStatus().verified).isEqualTo("0/5");
              assertThat(status.getStatus().pods)
                  .allSatisfy(p -> assertThat(p.reason).isEqualTo("ProbeFailed"));
            });
    assertThat(trap.requested()).as("the redirect target is never asked").isEmpty();
    assertThat(hugeSent.get())
        .as("the oversized body is not read to its end")
        .isLessThan(16L * 1024 * 1024);
    assertThat(logs.list)
        .as("nothing escapes the reconciler")
        .noneSatisfy(
            event -> {
              assertThat(
                      event.getLevel().isGreaterOrEqual(Level.ERROR)
                          || event.getThrowableProxy() != null)
                  .isTrue();
            });
    // Events are written off the reconcile thread: the one announcing the TLS failure may follow
    // the status.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(h.eventHistory())
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("ProbeFailed");
                          assertThat(e.getMessage()).contains("TLS failure");
                        }));
  }
}

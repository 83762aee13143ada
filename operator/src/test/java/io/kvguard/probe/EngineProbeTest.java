package io.kvguard.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.GenericProbeSpec;
import io.kvguard.customresource.GenericValueSource;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.verdict.ProbeOutcome;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every engine's probe turns a reading that cannot establish the figures into a failed outcome,
 * never a throw.
 */
class EngineProbeTest {
  private final EngineProbes probes = EngineProbes.standard(EngineHttp.createDefault());

  @ParameterizedTest
  @EnumSource(Engine.class)
  void anUnreachableEngineIsAFailedOutcomeNamingTheRequest(Engine engine) throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    RoleSpec role = new RoleSpec();
    role.setEngine(engine);
    if (engine == Engine.GENERIC) {
      GenericValueSource pool = new GenericValueSource();
      pool.setJsonPointer("/kv");
      GenericProbeSpec generic = new GenericProbeSpec();
      generic.setPath("/stats");
      generic.setPool(pool);
      role.setGeneric(generic);
    }
    ProbeOutcome outcome =
        probes
            .forRole(role)
            .probe(EngineEndpoint.of("http", "127.0.0.1", closedPort, Duration.ofSeconds(2)));

    assertThat(outcome).isInstanceOf(ProbeOutcome.Failed.class);
    assertThat(((ProbeOutcome.Failed) outcome).cause()).startsWith("GET /").contains(" failed: ");
  }

  @Test
  void theFailureMessageIsTheProbeExceptionsMessageAsIs() {
    EngineProbe generic = new GenericProbe(EngineHttp.createDefault(), null);

    ProbeOutcome outcome =
        generic.probe(EngineEndpoint.of("http", "127.0.0.1", 1, Duration.ofSeconds(1)));

    assertThat(outcome)
        .isEqualTo(
            ProbeOutcome.failed("engine generic needs the role's generic settings: path and pool"));
  }

  /**
   * A read that throws (a defect, not an answer) is a failed probe here, where check meets it, with
   * the words the operator's scheduler used for it; check used to die with exit 1, which means
   * "refused".
   */
  @Test
  void aReadThatThrowsIsAFailedOutcomeNamingOnlyTheExceptionsClass() {
    EngineProbe broken =
        new EngineProbe() {
          @Override
          public Engine engine() {
            return Engine.SGLANG;
          }

          @Override
          public ProbeOutcome read(EngineEndpoint endpoint) {
            throw new NumberFormatException("For input string: \"engine text\"");
          }
        };

    assertThat(broken.probe(EngineEndpoint.of("http", "127.0.0.1", 1, Duration.ofSeconds(1))))
        .isEqualTo(ProbeOutcome.failed("probe error (NumberFormatException)"));
  }

  @Test
  void aRejectionPlanThatThrowsIsAFailedRejectionOutcome() {
    EngineRejection broken =
        (EngineRejection)
            java.lang.reflect.Proxy.newProxyInstance(
                EngineRejection.class.getClassLoader(),
                new Class<?>[] {EngineRejection.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("plan")) {
                    throw new IllegalStateException("engine text");
                  }
                  if (method.isDefault()) {
                    // paths(): the single prompt, as every engine without its own paths.
                    return java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args);
                  }
                  throw new UnsupportedOperationException(method.getName());
                });

    var outcome =
        new RejectionProbe(EngineHttp.createDefault())
            .send(
                java.util.Optional.of(broken),
                "sglang",
                EngineEndpoint.of("http", "127.0.0.1", 1, Duration.ofSeconds(1)),
                10,
                "m",
                new io.kvguard.verdict.PoolObservation(
                    5, java.util.OptionalLong.of(5), null, null, java.util.List.of()),
                EngineRejection.Route.POD);

    assertThat(outcome)
        .isEqualTo(
            new io.kvguard.verdict.RejectionOutcome.Failed("probe error (IllegalStateException)"));
  }
}

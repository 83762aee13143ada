package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RejectionRouterSpec;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The router stage: while the proof of a changed pod set is pending, only pods the last passing
 * proof named, unchanged, stay open; a proof that does not pass shuts every prefill and decode pod,
 * covered or not.
 */
class RouterProofsTest {
  private static final Instant NOW = Instant.parse("2026-12-06T05:00:00Z");
  private static final PoolVerdict POOL =
      new PoolVerdict(Verdict.Verified, GateReason.PoolSufficient, "pool 2040000 >= window");

  private final ModelDeployment md =
      AssessmentTest.modelDeployment(
          io.kvguard.testing.OperatorHarness.role("prefill", Engine.SGLANG, Map.of("r", "p")));

  RouterProofsTest() {
    RejectionRouterSpec router = new RejectionRouterSpec();
    router.setService("glm-router");
    router.setPort(30000);
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    rejection.setRouter(router);
    md.getSpec().setRejectionProbe(rejection);
    md.getMetadata().setUid("md-uid");
  }

  private static Assessment.Assessed member(String name, String image) {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withUid("uid-" + name)
            .endMetadata()
            .build();
    RouterProofs.Member member =
        new RouterProofs.Member(
            name, "uid-" + name, "prefill", image, "0.5.22", "c-" + name + "@0", null, null, 1);
    return new Assessment.Assessed(
        new PodAssessment(pod, "prefill", false, "c-" + name, 0, POOL, null, List.of(), null),
        null,
        null,
        Optional.empty(),
        Optional.empty(),
        member);
  }

  private static Assessment.Known known(
      Optional<RejectionOutcome> outcome, Optional<RouterProofs.Passed> passed) {
    return new Assessment.Known() {
      @Override
      public Optional<ProbeScheduler.Result<io.kvguard.verdict.ProbeOutcome>> probe(
          ProbeScheduler.Key key) {
        return Optional.empty();
      }

      @Override
      public Optional<ProbeScheduler.Result<RejectionOutcome>> rejection(ProbeScheduler.Key key) {
        return Optional.empty();
      }

      @Override
      public ProbeCredentials.Lookup token() {
        throw new UnsupportedOperationException();
      }

      @Override
      public ProbeTrust.Lookup tls() {
        throw new UnsupportedOperationException();
      }

      @Override
      public io.kvguard.probe.EngineProbes probes() {
        throw new UnsupportedOperationException();
      }

      @Override
      public Optional<ProbeScheduler.Result<RejectionOutcome>> routerProof(ProbeScheduler.Key key) {
        return outcome.map(o -> new ProbeScheduler.Result<>(RouterProofs.hash(key.how()), o, NOW));
      }

      @Override
      public Optional<RouterProofs.Passed> passedRouterProof() {
        return passed;
      }
    };
  }

  private static Map<String, PoolVerdict> verdicts(RouterProofs.Outcome outcome) {
    return outcome.assessed().stream()
        .collect(
            java.util.stream.Collectors.toMap(
                a -> a.assessment().podName(), a -> a.assessment().verdict()));
  }

  @Test
  void whileAChangedPodSetIsProvedOnlyPodsTheLastProofNamedUnchangedStayOpen() {
    Assessment.Assessed kept = member("prefill-0", "sha256:aaa");
    Assessment.Assessed newImage = member("prefill-1", "sha256:bbb");
    RouterProofs.Passed last =
        new RouterProofs.Passed(
            "0123456789abcdef",
            Set.of(
                kept.routerMember().covered(),
                member("prefill-1", "sha256:aaa").routerMember().covered()),
            NOW,
            "passed");

    RouterProofs.Outcome outcome =
        RouterProofs.apply(
            md, "md-uid", List.of(kept, newImage), known(Optional.empty(), Optional.of(last)), NOW);

    assertThat(verdicts(outcome).get("prefill-0").verified()).isTrue();
    assertThat(verdicts(outcome).get("prefill-0").message()).contains("by proof 0123456789abcdef");
    assertThat(verdicts(outcome).get("prefill-1").reason()).isEqualTo(GateReason.AwaitingProbe);
    assertThat(outcome.request()).isPresent();
    assertThat(outcome.request().get().members()).hasSize(2);
    assertThat(outcome.status().result).isEqualTo("Pending");
  }

  @Test
  void aProofThatDoesNotPassShutsEveryPodCoveredOrNot() {
    Assessment.Assessed a = member("prefill-0", "sha256:aaa");
    Assessment.Assessed b = member("prefill-1", "sha256:aaa");
    RejectionOutcome answered =
        new RejectionOutcome.Answered(
            200, 10, "0".repeat(64), 1_048_570, false, "", "S4 scheduler validate_input_length");

    RouterProofs.Outcome outcome =
        RouterProofs.apply(
            md,
            "md-uid",
            List.of(a, b),
            known(
                Optional.of(answered),
                Optional.of(
                    new RouterProofs.Passed(
                        "0123456789abcdef",
                        Set.of(a.routerMember().covered(), b.routerMember().covered()),
                        NOW,
                        "passed"))),
            NOW);

    assertThat(verdicts(outcome).values())
        .allSatisfy(
            v -> {
              assertThat(v.reason()).isEqualTo(GateReason.RejectionPathUnsafe);
              assertThat(v.message()).startsWith("through router Service glm-router port 30000");
            });
    assertThat(outcome.forget()).isTrue();
    assertThat(outcome.request()).isEmpty();
    assertThat(outcome.status().result).isEqualTo("RejectionPathUnsafe");
  }

  private static RouterProofs.Request requestTo(String scheme) {
    io.kvguard.probe.EngineEndpoint pod =
        io.kvguard.probe.EngineEndpoint.of(
                scheme, "10.0.0.7", 30000, java.time.Duration.ofSeconds(5))
            .withBearerToken(Optional.of("engine-api-key"));
    RouterProofs.Member member =
        new RouterProofs.Member(
            "prefill-0", "uid-prefill-0", "prefill", "sha256:a", "0.5.22", "c@0", pod, null, 1);
    return new RouterProofs.Request(
        new ProbeScheduler.Key("router-proof/md-uid", "k"),
        "0123456789abcdef",
        List.of(member),
        "glm-router",
        30000,
        java.time.Duration.ofSeconds(5),
        "glm",
        1,
        java.time.Duration.ofSeconds(30),
        NOW,
        Optional.empty());
  }

  /**
   * The router is reached over plain HTTP: the engines' bearer token goes with the proof only where
   * the pods themselves are probed over plain HTTP, never where they are probed over TLS.
   */
  @Test
  void theEnginesTokenIsNotSentInTheClearWhenThePodsAreProbedOverTls() {
    assertThat(requestTo("https").routerEndpoint("glm-router.ns.svc").bearerToken()).isEmpty();
    assertThat(requestTo("http").routerEndpoint("glm-router.ns.svc").bearerToken())
        .contains("engine-api-key");
    assertThat(requestTo("https").routerEndpoint("glm-router.ns.svc").baseUri().toString())
        .isEqualTo("http://glm-router.ns.svc:30000");
  }

  /**
   * A proof not sent because of its Service (ExternalName, no selector, missing) is looked at again
   * a period later, since fixing the Service does not change the key; any other inconclusive proof
   * stands until the key changes.
   */
  @Test
  void aProofNotSentBecauseOfItsServiceIsTriedAgainAPeriodLater() {
    RouterProofs.Request request = requestTo("http");
    java.time.Instant periodAgo = NOW.minusSeconds(31);
    RejectionOutcome refusedService =
        new RejectionOutcome.Inconclusive(
            RouterServices.NOT_SENT
                + "glm-router (spec.rejectionProbe.router.service) is of type"
                + " ExternalName",
            1);
    RejectionOutcome otherInconclusive =
        new RejectionOutcome.Inconclusive("not sent: prefill pod prefill-0 reports no …", 1);

    assertThat(request.fresh(new ProbeScheduler.Result<>("k", refusedService, periodAgo)))
        .isFalse();
    assertThat(request.fresh(new ProbeScheduler.Result<>("k", refusedService, NOW))).isTrue();
    assertThat(request.fresh(new ProbeScheduler.Result<>("k", otherInconclusive, periodAgo)))
        .isTrue();
  }
}

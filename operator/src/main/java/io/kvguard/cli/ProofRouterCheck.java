package io.kvguard.cli;

import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.EngineRejection;
import io.kvguard.probe.PdRouterProbe;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * {@code check --pd-router --register-prefill URL --register-decode URL}: a prefill/decode model
 * proven through a dedicated proof router, as the operator proves it with
 * spec.rejectionProbe.router.registerWorkers (docs/rejection-probe.md, "The PD route"). Each
 * worker's pool is probed and judged on its own, as the operator probes each pod; once every one
 * passed, {@link PdRouterProbe} reads each worker's admission figures, adds the workers to the
 * router at {@code --url}, sends the same paths with the same recognisers and removes the workers
 * again, whatever came of it. Only the label the workers carry differs: one of this run's own
 * ({@value #LABEL_PREFIX} and a random UUID), so a worker the operator or another check put on the
 * router is never taken for this run's, and never removed.
 */
final class ProofRouterCheck {
  static final String LABEL_PREFIX = "kvguard-check/";

  private ProofRouterCheck() {}

  /**
   * What the run concluded.
   *
   * @param rejection null when the proof was not sent (a worker's pool check did not pass)
   */
  record Result(
      PoolVerdict verdict, CheckCommand.RejectionCheck rejection, List<RegisteredWorker> workers) {}

  static Result run(EngineProbe probe, PdRouterProbe routerProbe, CheckCommand.Request request) {
    CheckCommand.Rejection asked = request.rejection();
    List<RegisteredWorker.Entry> entries = new ArrayList<>();
    for (RegisteredWorker.Named worker : asked.register()) {
      EngineEndpoint endpoint =
          new EngineEndpoint(worker.url(), request.timeout(), request.bearerToken());
      if (request.metricsPort().isPresent()) {
        endpoint = endpoint.withMetricsPort(request.metricsPort().get());
      }
      ProbeOutcome outcome = probe.probe(endpoint.startingNow());
      entries.add(
          new RegisteredWorker.Entry(
              worker, endpoint, outcome, PoolJudge.judge(request.policy(), outcome)));
    }
    Optional<PoolVerdict> shut =
        entries.stream().map(ProofRouterCheck::notProvable).flatMap(Optional::stream).findFirst();
    if (shut.isPresent()) {
      return new Result(shut.get(), null, reports(entries));
    }
    List<PdRouterProbe.Member> members = new ArrayList<>();
    long promptTokens = 0;
    for (RegisteredWorker.Entry entry : entries) {
      PoolObservation observation = entry.observation();
      members.add(
          new PdRouterProbe.Member(
              entry.named().url().toString(), entry.named().type(), entry.endpoint(), observation));
      try {
        // The proof's key length, as the operator's: the largest of its pods'.
        promptTokens =
            Math.max(promptTokens, RejectionJudge.promptTokens(observation, asked.marginTokens()));
      } catch (ArithmeticException e) {
        CheckCommand.RejectionCheck none = new CheckCommand.RejectionCheck(-1, null);
        return new Result(none.verdict(passed(entries)), none, reports(entries));
      }
    }
    Optional<EngineRejection> engine = probe.rejection();
    RejectionOutcome outcome =
        engine.isEmpty()
            ? new RejectionOutcome.Failed("kvguard has no rejection probe for this engine")
            : routerProbe.prove(
                engine.get(),
                members,
                routerEndpoint(request),
                asked.model(),
                promptTokens,
                Optional.of(LABEL_PREFIX + UUID.randomUUID()),
                new RegisteredWorker.Journal(entries));
    CheckCommand.RejectionCheck rejection = new CheckCommand.RejectionCheck(promptTokens, outcome);
    return new Result(rejection.verdict(passed(entries)), rejection, reports(entries));
  }

  /**
   * Why a worker cannot be part of the proof: its pool check did not pass, or it is not a server of
   * the type it was named as (the router would be told the wrong type, and a unified server is
   * proven by sending to it directly).
   */
  private static Optional<PoolVerdict> notProvable(RegisteredWorker.Entry entry) {
    RegisteredWorker.Named named = entry.named();
    String who = named.type() + " worker " + named.url() + " (" + named.flag() + "): ";
    PoolVerdict pool = entry.pool();
    if (!pool.verified()) {
      return Optional.of(new PoolVerdict(pool.verdict(), pool.reason(), who + pool.message()));
    }
    String mode = entry.observation() == null ? null : entry.observation().disaggregationMode();
    if (!named.type().equals(mode)) {
      return Optional.of(
          new PoolVerdict(
              Verdict.Unknown,
              GateReason.RejectionProbeInconclusive,
              who
                  + "the engine reports disaggregation mode "
                  + Objects.toString(mode, "none (a unified server)")
                  + ", not "
                  + named.type()
                  + "; nothing was added to the router or sent through it"));
    }
    return Optional.empty();
  }

  /** Every worker's pool passed: the verdict the router's answers add to. */
  private static PoolVerdict passed(List<RegisteredWorker.Entry> entries) {
    long prefill = entries.stream().filter(e -> e.named().type().equals("prefill")).count();
    return new PoolVerdict(
        Verdict.Verified,
        entries.get(0).pool().reason(),
        "the pools of "
            + prefill
            + " prefill and "
            + (entries.size() - prefill)
            + " decode workers passed");
  }

  /**
   * The router over the rejection probe's deadline. The engines' key goes along, for the router to
   * send on to each worker, unless a worker is probed over TLS and the router is not: as the
   * operator, kvguard does not send in the clear a key the engines are asked for over TLS.
   */
  private static EngineEndpoint routerEndpoint(CheckCommand.Request request) {
    boolean clear =
        request.baseUri().getScheme().equals("http")
            && request.rejection().register().stream()
                .anyMatch(w -> w.url().getScheme().equals("https"));
    return new EngineEndpoint(
        request.baseUri(),
        request.rejection().timeout(),
        clear ? Optional.empty() : request.bearerToken());
  }

  private static List<RegisteredWorker> reports(List<RegisteredWorker.Entry> entries) {
    return entries.stream().map(RegisteredWorker.Entry::report).toList();
  }
}

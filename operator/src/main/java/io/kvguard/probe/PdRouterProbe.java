package io.kvguard.probe;

import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.SglangRouterPaths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The proof of a prefill/decode SGLang model through its router (spec.rejectionProbe.router; issue
 * 26 §2): reads each prefill and decode pod's admission figures from its own {@code /server_info},
 * sizes the prompts that reach each check on whichever worker the router picks ({@link
 * SglangRouterPaths}), and sends them to the router, judged as {@code check --rejection-probe
 * --pd-router} judges them ({@link EngineRejection.Route#PD_ROUTER}). Thin I/O: what to send and
 * what counts are decided elsewhere.
 */
public final class PdRouterProbe {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(PdRouterProbe.class);
  private final EngineHttp http;
  private final RejectionProbe rejectionProbe;
  private final RouterWorkers routerWorkers;

  /**
   * How many rejection-probe timeouts a whole proof may take, from its first request to the last
   * prompt's answer: the pods' {@code /server_info} reads, adding the pods to a proof router, and
   * the prompts. Two, because adding the pods and sending the prompts are each allowed one timeout
   * (the router's health check of every pod, and the engines' refusals): the cap keeps that, and
   * stops the reads, one pool-probe timeout per pod before, from adding up with the pod count.
   * Removing the workers added comes after it, with a timeout of its own, so a proof holds its
   * thread for at most three timeouts.
   */
  static final int CAP_TIMEOUTS = 2;

  public PdRouterProbe(EngineHttp http, RejectionProbe rejectionProbe) {
    this.http = http;
    this.rejectionProbe = rejectionProbe;
    this.routerWorkers = new RouterWorkers(http);
  }

  /**
   * One prefill or decode pod whose pool check passed.
   *
   * @param role its disaggregation mode as the engine reports it (prefill or decode)
   * @param endpoint where its own engine answers (for its /server_info)
   * @param observation what its pool probe saw
   */
  public record Member(
      String pod, String role, EngineEndpoint endpoint, PoolObservation observation) {}

  /**
   * @param engine SGLang's rejection knowledge
   * @param router the router's endpoint, with the rejection probe's timeout
   * @param promptTokens the probe's key length (marginTokens), as per-pod records have it
   * @param registerFor the ModelDeployment (namespace/name) whose pods are added to the router for
   *     the proof, or empty when the router lists its workers itself
   * @param journal told what became of each pod added to the router and removed from it ({@code
   *     check} reports it worker by worker)
   */
  public RejectionOutcome prove(
      EngineRejection engine,
      List<Member> members,
      EngineEndpoint router,
      String model,
      long promptTokens,
      Optional<String> registerFor,
      RouterWorkers.Journal journal) {
    Duration cap = capOf(router.timeout());
    long capNanos = System.nanoTime() + cap.toNanos();
    RejectionOutcome outcome =
        proveWithin(engine, members, router, model, promptTokens, registerFor, journal, capNanos);
    if (outcome instanceof RejectionOutcome.Failed failed && System.nanoTime() - capNanos >= 0) {
      return new RejectionOutcome.Failed(
          "the proof ran past its cap of "
              + cap.toSeconds()
              + " s ("
              + CAP_TIMEOUTS
              + " × spec.rejectionProbe.timeoutSeconds, for reading the pods' figures, adding them"
              + " to the router and the prompts' answers; tried again after probe.periodSeconds):"
              + " "
              + failed.cause());
    }
    return outcome;
  }

  /** The cap on a whole proof through the router ({@link #CAP_TIMEOUTS}). */
  public static Duration capOf(Duration timeout) {
    return timeout.multipliedBy(CAP_TIMEOUTS);
  }

  private RejectionOutcome proveWithin(
      EngineRejection engine,
      List<Member> members,
      EngineEndpoint router,
      String model,
      long promptTokens,
      Optional<String> registerFor,
      RouterWorkers.Journal journal,
      long capNanos) {
    List<SglangRouterPaths.Worker> workers = new ArrayList<>();
    List<RouterWorkers.Wanted> wanted = new ArrayList<>();
    PoolObservation judgedAgainst = null;
    for (Member member : members) {
      String who = member.role() + " pod " + member.pod();
      if (member.observation().engineContextTokens().isEmpty()) {
        return new RejectionOutcome.Inconclusive(
            "not sent: " + who + " reports no context length", promptTokens);
      }
      try {
        SglangAdmissionReader.Worker read =
            SglangAdmissionReader.readWorker(
                http,
                member.endpoint().startingNowNotAfter(capNanos),
                member.observation().engineContextTokens().getAsLong());
        workers.add(new SglangRouterPaths.Worker(member.pod(), member.role(), read.admission()));
        wanted.add(
            new RouterWorkers.Wanted(
                member.pod(),
                member.endpoint().baseUri().toString().replaceAll("/+$", ""),
                member.role(),
                member.role().equals("prefill") ? read.bootstrapPort() : OptionalLong.empty(),
                router.bearerToken()));
      } catch (ProbeException e) {
        return new RejectionOutcome.Failed(
            who + ": its admission limits could not be read: " + e.getMessage());
      } catch (RuntimeException e) {
        return new RejectionOutcome.Failed(who + ": " + EngineProbe.unexpected(e));
      }
      if (judgedAgainst == null && member.role().equals("prefill")) {
        // Every worker reports the same context length once the plan is sendable: its refusals
        // are checked against it.
        judgedAgainst = member.observation();
      }
    }
    AdmissionPlan plan = SglangRouterPaths.plan(workers);
    if (plan instanceof AdmissionPlan.Unprovable unprovable) {
      return new RejectionOutcome.Inconclusive("not sent: " + unprovable.reason(), promptTokens);
    }
    if (registerFor.isEmpty()) {
      return send(
          engine, router.startingNowNotAfter(capNanos), plan, promptTokens, model, judgedAgainst);
    }
    for (RouterWorkers.Wanted one : wanted) {
      if (one.type().equals("prefill") && one.bootstrapPort().isEmpty()) {
        return new RejectionOutcome.Inconclusive(
            "not sent: prefill pod "
                + one.pod()
                + " reports no disaggregation_bootstrap_port in /server_info, which the proof"
                + " router must be told when the pod is added to it",
            promptTokens);
      }
    }
    RouterWorkers.Added added =
        routerWorkers.add(router.startingNowNotAfter(capNanos), wanted, registerFor.get(), journal);
    try {
      if (added.problem().isPresent()) {
        String why =
            "the prefill and decode pods could not be added to the proof router"
                + " (spec.rejectionProbe.router.registerWorkers): "
                + added.problem().get();
        return added.unreachable()
            ? new RejectionOutcome.Failed(why)
            : new RejectionOutcome.Inconclusive("not sent: " + why, promptTokens);
      }
      return send(
          engine, router.startingNowNotAfter(capNanos), plan, promptTokens, model, judgedAgainst);
    } finally {
      // Also when the proof failed or ran past its cap, with a timeout of its own: a worker left on
      // the proof router gets no production traffic (the proof router is not the production
      // router), and the next proof removes it first.
      routerWorkers
          .remove(router.startingNow(), added.ids(), journal)
          .ifPresent(
              problem ->
                  LOG.warn(
                      "workers added to proof router {} for {} not removed: {}",
                      router.baseUri(),
                      registerFor.get(),
                      problem));
    }
  }

  private RejectionOutcome send(
      EngineRejection engine,
      EngineEndpoint router,
      AdmissionPlan plan,
      long promptTokens,
      String model,
      PoolObservation judgedAgainst) {
    return rejectionProbe.sendPlan(
        engine, router, plan, promptTokens, model, judgedAgainst, EngineRejection.Route.PD_ROUTER);
  }
}

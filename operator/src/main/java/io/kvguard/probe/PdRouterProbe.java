package io.kvguard.probe;

import io.kvguard.verdict.AdmissionPlan;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.SglangRouterPaths;
import java.util.ArrayList;
import java.util.List;

/**
 * The proof of a prefill/decode SGLang model through its router (spec.rejectionProbe.router; issue
 * 26 §2): reads each prefill and decode pod's admission figures from its own {@code /server_info},
 * sizes the prompts that reach each check on whichever worker the router picks ({@link
 * SglangRouterPaths}), and sends them to the router, judged as {@code check --rejection-probe
 * --pd-router} judges them ({@link EngineRejection.Route#PD_ROUTER}). Thin I/O: what to send and
 * what counts are decided elsewhere.
 */
public final class PdRouterProbe {
  private final EngineHttp http;
  private final RejectionProbe rejectionProbe;

  public PdRouterProbe(EngineHttp http, RejectionProbe rejectionProbe) {
    this.http = http;
    this.rejectionProbe = rejectionProbe;
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
   */
  public RejectionOutcome prove(
      EngineRejection engine,
      List<Member> members,
      EngineEndpoint router,
      String model,
      long promptTokens) {
    List<SglangRouterPaths.Worker> workers = new ArrayList<>();
    PoolObservation judgedAgainst = null;
    for (Member member : members) {
      String who = member.role() + " pod " + member.pod();
      if (member.observation().engineContextTokens().isEmpty()) {
        return new RejectionOutcome.Inconclusive(
            "not sent: " + who + " reports no context length", promptTokens);
      }
      try {
        workers.add(
            new SglangRouterPaths.Worker(
                member.pod(),
                member.role(),
                SglangAdmissionReader.read(
                    http,
                    member.endpoint().startingNow(),
                    member.observation().engineContextTokens().getAsLong())));
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
    return rejectionProbe.sendPlan(
        engine,
        router.startingNow(),
        plan,
        promptTokens,
        model,
        judgedAgainst,
        EngineRejection.Route.PD_ROUTER);
  }
}

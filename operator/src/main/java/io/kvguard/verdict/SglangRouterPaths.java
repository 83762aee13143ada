package io.kvguard.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The prompts sent through a prefill/decode router (spec.rejectionProbe.router), computed from
 * every prefill and decode worker's own admission figures (issue 26 §2). The router picks a prefill
 * worker per request, and kvguard cannot choose which, so each prompt must reach its check on
 * whichever worker gets it:
 *
 * <ul>
 *   <li>S1 at N = C − R, refused by any worker's tokenizer: C and R must be the same on every
 *       worker (otherwise one worker's S1 prompt is another's band or admitted prompt).
 *   <li>S4 at N = max over prefill workers of M: at least every prefill worker's M, so each
 *       scheduler refuses it; below C − R, so no tokenizer does. It is sent once per prefill worker
 *       (at most {@value #MAX_BAND_PROMPTS} times), so a router that takes turns meets several
 *       workers; a router that picks by load or by prompt may send every copy to the same one. The
 *       router answers with the decode worker's response, and a decode worker refuses N ≥ M_d
 *       itself: each decode worker's M_d must be above N, or at most every prefill M (then none of
 *       its pairs has a band; the review of 2026-12-04 §1b).
 * </ul>
 *
 * Where no length lands in every prefill worker's band, or a worker's own paths cannot be computed,
 * the proof is inconclusive and says why. A pure function of what the workers reported.
 */
public final class SglangRouterPaths {
  /** Copies of the band prompt sent at most, whatever the number of prefill workers. */
  public static final int MAX_BAND_PROMPTS = 8;

  private SglangRouterPaths() {}

  /**
   * One prefill or decode worker as its own /server_info describes it.
   *
   * @param pod the pod's name, as messages show it
   * @param role "prefill" or "decode", as the engine reports its disaggregation mode
   */
  public record Worker(String pod, String role, SglangAdmission admission) {
    boolean prefill() {
      return role.equals("prefill");
    }
  }

  public static AdmissionPlan plan(List<Worker> workers) {
    List<Worker> prefill = workers.stream().filter(Worker::prefill).toList();
    if (prefill.isEmpty()) {
      return new AdmissionPlan.Unprovable(
          "no prefill pod has passed its pool check, so no prompt through the router can be sized");
    }
    Set<Long> contexts = new TreeSet<>();
    Set<Long> reserves = new TreeSet<>();
    long bandTokens = 0;
    boolean everyBandEmpty = true;
    boolean someBandEmpty = false;
    for (Worker worker : workers) {
      if (!worker.role().equals("prefill") && !worker.role().equals("decode")) {
        // Neither sized as a prefill worker nor checked as a decode one: SGLang v0.5.18 knows
        // null, prefill and decode (disaggregation/utils.py:100-103); anything else is unread.
        return new AdmissionPlan.Unprovable(
            "pod "
                + worker.pod()
                + " reports disaggregation_mode "
                + worker.role()
                + ", which kvguard does not size prompts through a router for (prefill or decode)");
      }
      // Each worker's own paths first: auto-truncation, a reported M its version cannot produce or
      // a
      // band that cannot be checked make that worker unprovable, and so the route through it.
      AdmissionPlan own = worker.admission().pathsOnReportedLimit();
      if (own instanceof AdmissionPlan.Unprovable unprovable) {
        return new AdmissionPlan.Unprovable(
            worker.role() + " pod " + worker.pod() + ": " + unprovable.reason());
      }
      List<String> problems = new ArrayList<>();
      Optional<Long> reserved = worker.admission().reservedTokens(problems);
      if (reserved.isEmpty()) {
        return new AdmissionPlan.Unprovable(
            worker.role() + " pod " + worker.pod() + ": " + String.join("; ", problems));
      }
      contexts.add(worker.admission().contextTokens());
      reserves.add(reserved.get());
      if (worker.prefill()) {
        boolean band = ((AdmissionPlan.Prompts) own).prompts().size() > 1;
        everyBandEmpty &= !band;
        someBandEmpty |= !band;
        bandTokens = Math.max(bandTokens, worker.admission().maxReqInputLen().getAsLong());
      }
    }
    if (contexts.size() > 1 || reserves.size() > 1) {
      return new AdmissionPlan.Unprovable(
          "the prefill and decode pods report different context lengths "
              + contexts
              + " or speculative reserves "
              + reserves
              + ": one worker's shortest refused prompt is another's admitted one, and the router's"
              + " choice of worker cannot be forced; run every prefill and decode pod with the same"
              + " --context-length and speculative settings");
    }
    long c = contexts.iterator().next();
    long r = reserves.iterator().next();
    ProbePrompt s1 =
        new ProbePrompt(
            SglangAdmission.S1 + " through the router",
            c - r,
            Set.of(SglangAdmission.CONTEXT_CHECK),
            "N = C − R = " + c + " − " + r + ": refused by the tokenizer of any worker");
    if (everyBandEmpty) {
      // Every prefill worker's tokenizer refuses whatever its scheduler would: no band to reach.
      return new AdmissionPlan.Prompts(List.of(s1));
    }
    if (someBandEmpty || bandTokens >= c - r) {
      return new AdmissionPlan.Unprovable(
          "the prefill pods' scheduler bands [max_req_input_len, C − R − 1] do not overlap"
              + " (C − R = "
              + (c - r)
              + ", the largest max_req_input_len "
              + bandTokens
              + "): no prompt length reaches the scheduler's check on every prefill pod, and the"
              + " router's choice of worker cannot be forced; give every prefill pod the same pool"
              + " (then all report the same max_req_input_len)");
    }
    // The router answers with the decode worker's response, and decode runs its own S4 with its own
    // M_D: a pair (prefill p, decode d) answers from stale KV for M_p ≤ N < min(M_d, C − R) (the
    // review of 2026-12-04 §1b). A decode worker with M_d ≤ every prefill M refuses each of its
    // pairs' prompts itself (its pairs have no band); any other must have M_d above the band
    // prompt,
    // or that prompt proves nothing of the lengths its pairs expose below it.
    long smallestPrefill =
        prefill.stream()
            .mapToLong(w -> w.admission().maxReqInputLen().getAsLong())
            .min()
            .getAsLong();
    for (Worker decode : workers) {
      long md = decode.admission().maxReqInputLen().getAsLong();
      if (!decode.prefill() && md > smallestPrefill && md <= bandTokens) {
        return new AdmissionPlan.Unprovable(
            "decode pod "
                + decode.pod()
                + " refuses prompts from "
                + md
                + " tokens (its max_req_input_len) but a prefill pod's scheduler lets through prompts"
                + " from "
                + smallestPrefill
                + ": lengths in between reach the path that failed in the incident on that pair, and no"
                + " single prompt reaches every prefill pod's scheduler (from "
                + bandTokens
                + ") below this decode pod's own check; the router's choice of worker cannot be forced;"
                + " give every prefill pod the same pool");
      }
    }
    // The refusal must state a limit some worker reported and the prompt reaches: a prefill
    // worker's, or a decode worker's at most every prefill M (those pairs have no band).
    Set<Long> statedLimits = new TreeSet<>();
    for (Worker worker : workers) {
      long m = worker.admission().maxReqInputLen().getAsLong();
      if (m <= bandTokens) {
        statedLimits.add(m);
      }
    }
    int copies = Math.min(prefill.size(), MAX_BAND_PROMPTS);
    List<ProbePrompt> prompts = new ArrayList<>(List.of(s1));
    for (int i = 1; i <= copies; i++) {
      prompts.add(
          new ProbePrompt(
              SglangAdmission.S4 + " through the router (" + i + " of " + copies + ")",
              bandTokens,
              Set.of(SglangAdmission.SCHEDULER_CHECK),
              "N = the largest prefill max_req_input_len = "
                  + bandTokens
                  + ": at least every prefill pod's M and below C − R = "
                  + (c - r)
                  + ", so whichever prefill pod the router picks, only its scheduler refuses it",
              statedLimits));
    }
    return new AdmissionPlan.Prompts(prompts);
  }
}

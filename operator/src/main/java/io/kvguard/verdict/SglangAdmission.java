package io.kvguard.verdict;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * SGLang's admission checks for an over-long prompt, and the prompts that reach each one, computed
 * from what the engine itself reports (the review of 2026-12-04, SGLang tag v0.5.18; sources in
 * docs/rejection-probe.md):
 *
 * <ul>
 *   <li>S1, the tokenizer ({@code tokenizer_manager.py:1196-1219}): refuses N + R ≥ C, HTTP 400
 *       "The input (… tokens) is longer than the model's context length (… tokens)." Reached by N =
 *       C − R.
 *   <li>S4, the scheduler ({@code scheduler.py:2602-2611}, {@code managers/utils.py:193-223}):
 *       refuses N ≥ M, M = {@code max_req_input_len}, through {@code set_finish_with_abort}: the
 *       path that answered HTTP 200 with other requests' KV in the incident (under prefill/decode
 *       disaggregation). Reached only when S1 passes, so only when M &lt; C − R; then N = M.
 * </ul>
 *
 * <p>S2 needs a request that asks for many output tokens (the probe asks for one), S3 is no length
 * check, S5 and S6 cannot be reached by a fresh prompt (S4 stubs it first), S7 is start-up only.
 *
 * @param contextTokens C, the context length {@code /v1/models} reports
 * @param version the engine's version as reported, or null
 * @param maxReqInputLen M as {@code /server_info} reports it, empty when absent or not a positive
 *     integer
 * @param allowAutoTruncate {@code /server_info.allow_auto_truncate}, empty when absent or not a
 *     boolean
 * @param speculativeAlgorithm {@code speculative_algorithm}, null when none
 * @param speculativeAdaptive {@code speculative_adaptive}, empty when absent
 * @param eagleTopk {@code speculative_eagle_topk}
 * @param numSteps {@code speculative_num_steps}
 * @param numDraftTokens {@code speculative_num_draft_tokens}
 * @param dcpSize {@code dcp_size}, empty when absent (then 1: older builds have no such field)
 * @param poolTokens {@code max_total_num_tokens}, the pool term of the version's formula
 */
public record SglangAdmission(
    long contextTokens,
    String version,
    OptionalLong maxReqInputLen,
    Optional<Boolean> allowAutoTruncate,
    String speculativeAlgorithm,
    Optional<Boolean> speculativeAdaptive,
    OptionalLong eagleTopk,
    OptionalLong numSteps,
    OptionalLong numDraftTokens,
    OptionalLong dcpSize,
    OptionalLong poolTokens) {

  /** The refusal class of S1 as {@code SglangRejection} names it. */
  public static final String CONTEXT_CHECK = "context-length check";

  /** The refusal class of S4 as {@code SglangRejection} names it. */
  public static final String SCHEDULER_CHECK = "validate_input_length";

  static final String S1 = "S1 tokenizer context-length check";
  static final String S4 = "S4 scheduler validate_input_length (max_req_input_len)";

  /**
   * The releases whose {@code max_req_input_len} formula kvguard has read, and how it goes: M =
   * min(C − 1, P × dcp − 1) − 5, the dcp factor from 0.5.17 on (sgl-project/sglang, read through
   * bytedance-iaas/sglang, {@code python/sglang/srt/managers/tp_worker.py}: v0.5.16:482-492 without
   * dcp, v0.5.17:509-513 and v0.5.18:525-537 with it).
   */
  static final Map<String, Boolean> FORMULA_USES_DCP =
      Map.of("0.5.16", false, "0.5.17", true, "0.5.18", true);

  /**
   * Speculative algorithms that reserve no tokens ({@code SpeculativeAlgorithm.is_eagle} false).
   */
  private static final Set<String> NO_RESERVE = Set.of("NGRAM", "STANDALONE");

  /** Those that do ({@code spec_info.py:98-105}; NEXTN is turned into EAGLE by server_args). */
  private static final Set<String> EAGLE = Set.of("EAGLE", "EAGLE3", "FROZEN_KV_MTP", "NEXTN");

  /**
   * M as this version's source computes it, for a pool P, a context C and a DCP size; empty when
   * kvguard has not read the version's formula.
   */
  public static OptionalLong formula(String version, long contextTokens, long pool, long dcp) {
    Boolean usesDcp = version == null ? null : FORMULA_USES_DCP.get(release(version));
    if (usesDcp == null) {
      return OptionalLong.empty();
    }
    long poolTerm = Math.subtractExact(Math.multiplyExact(pool, usesDcp ? dcp : 1), 1);
    return OptionalLong.of(Math.min(contextTokens - 1, poolTerm) - 5);
  }

  /** The release a version names, "" when it names none kvguard compares (e.g. a dev build). */
  private static String release(String version) {
    EngineVersion parsed = EngineVersion.parse(version);
    if (!parsed.isRelease() || parsed.parts().get(3) != 0 || parsed.parts().get(4) != 0) {
      return "";
    }
    return parsed.parts().get(0) + "." + parsed.parts().get(1) + "." + parsed.parts().get(2);
  }

  /** R, SGLang's {@code compute_num_reserved_tokens} ({@code managers/utils.py:380-399}). */
  Optional<Long> reservedTokens(List<String> problems) {
    String algorithm = speculativeAlgorithm == null ? "NONE" : speculativeAlgorithm;
    if (algorithm.equals("NONE") || NO_RESERVE.contains(algorithm)) {
      return Optional.of(0L);
    }
    if (!EAGLE.contains(algorithm)) {
      problems.add(
          "speculative_algorithm "
              + algorithm
              + " is one kvguard does not know, so the tokens SGLang reserves per request (which"
              + " lower the context-length check) are unknown");
      return Optional.empty();
    }
    if (speculativeAdaptive.orElse(false)) {
      problems.add(
          "speculative_adaptive is on: SGLang reserves tokens from its candidate-step table, which"
              + " /server_info does not show");
      return Optional.empty();
    }
    if (eagleTopk.isEmpty() || numSteps.isEmpty() || numDraftTokens.isEmpty()) {
      problems.add(
          "speculative_algorithm is "
              + algorithm
              + " but speculative_eagle_topk, speculative_num_steps or speculative_num_draft_tokens"
              + " is missing, so the tokens SGLang reserves per request are unknown");
      return Optional.empty();
    }
    return Optional.of(
        Math.max(
            Math.multiplyExact(eagleTopk.getAsLong(), numSteps.getAsLong()),
            numDraftTokens.getAsLong()));
  }

  /**
   * The prompts that reach S1 and, where its band is not empty, S4; or why nothing sent can prove
   * anything. A pure function of what the engine reported.
   */
  public AdmissionPlan paths() {
    return paths(true);
  }

  /**
   * As {@link #paths()}, for one worker behind a prefill/decode router: where kvguard has not read
   * this version's {@code max_req_input_len} formula, a reported M below C − R is taken as it is,
   * because the band prompt sized from it is then sent and only the scheduler's own refusal opens
   * anything, whose sentence states the refusing scheduler's M, which must be at most the prompt
   * and one of the M the workers reported (SglangRouterPaths, RejectionProbe); a reported M that
   * leaves no band, which nothing sent can check, stays unprovable.
   */
  AdmissionPlan pathsOnReportedLimit() {
    return paths(false);
  }

  private AdmissionPlan paths(boolean formulaRequired) {
    if (allowAutoTruncate.isEmpty()) {
      return new AdmissionPlan.Unprovable(
          "/server_info reports no allow_auto_truncate: whether SGLang truncates over-long prompts"
              + " (then answers them with HTTP 200 whatever their length) is unknown; run a build that"
              + " reports its server arguments in /server_info");
    }
    if (allowAutoTruncate.get()) {
      return new AdmissionPlan.Unprovable(
          "the engine runs with --allow-auto-truncate: SGLang cuts every over-long prompt to its"
              + " limit and answers it (tokenizer_manager.py:1206-1219, managers/utils.py:206-214), so"
              + " refusal probing is meaningless and no refusal can be proven; remove"
              + " --allow-auto-truncate");
    }
    List<String> problems = new ArrayList<>();
    Optional<Long> reserved = reservedTokens(problems);
    if (reserved.isEmpty()) {
      return new AdmissionPlan.Unprovable(String.join("; ", problems));
    }
    long r = reserved.get();
    long overContext = contextTokens - r;
    if (overContext < 1) {
      return new AdmissionPlan.Unprovable(
          "the context length ("
              + contextTokens
              + ") is not above the "
              + r
              + " tokens SGLang reserves for speculative decoding: no prompt length is admitted");
    }
    ProbePrompt s1 =
        new ProbePrompt(
            S1,
            overContext,
            Set.of(CONTEXT_CHECK),
            "N = C − R = "
                + contextTokens
                + " − "
                + r
                + ": the shortest prompt the tokenizer refuses (N + R ≥ C)");
    if (maxReqInputLen.isEmpty()) {
      return new AdmissionPlan.Unprovable(
          "/server_info reports no max_req_input_len (or not a positive integer): the scheduler's"
              + " admission limit is unknown, so the prompts between it and the context length (the path"
              + " that failed in the incident) cannot be sized; run a build that reports it");
    }
    long m = maxReqInputLen.getAsLong();
    long dcp = dcpSize.orElse(1);
    OptionalLong allowed =
        poolTokens.isPresent()
            ? formula(version, contextTokens, poolTokens.getAsLong(), dcp)
            : OptionalLong.empty();
    if (allowed.isEmpty() && (formulaRequired || m >= overContext)) {
      return new AdmissionPlan.Unprovable(
          "kvguard has read SGLang's max_req_input_len formula for releases "
              + String.join(", ", new java.util.TreeSet<>(FORMULA_USES_DCP.keySet()))
              + " only"
              + (poolTokens.isEmpty() ? " and /server_info reports no max_total_num_tokens" : "")
              + ", not for version "
              + (version == null ? "(unreported)" : version)
              + ", so the reported max_req_input_len ("
              + m
              + ") cannot be checked against what the version allows; run one of those releases, or"
              + " add this version's formula (tp_worker.py get_worker_info) to kvguard");
    }
    if (allowed.isPresent() && m > allowed.getAsLong()) {
      return new AdmissionPlan.Unprovable(
          "/server_info reports max_req_input_len "
              + m
              + ", more than SGLang "
              + version
              + " allows for context "
              + contextTokens
              + ", pool "
              + poolTokens.getAsLong()
              + " and dcp_size "
              + dcp
              + " (min(C − 1, P × dcp − 1) − 5 = "
              + allowed.getAsLong()
              + "): the figures do not come from this version's scheduler (a hybrid-SWA pool, a patched"
              + " build, or a proxy rewriting the answer); probe the engine process itself, running an"
              + " unpatched release");
    }
    if (m >= overContext) {
      // The band M ≤ N < C − R is empty: every prompt the scheduler refuses, the tokenizer refuses
      // first.
      return new AdmissionPlan.Prompts(List.of(s1));
    }
    ProbePrompt s4 =
        new ProbePrompt(
            S4,
            m,
            Set.of(SCHEDULER_CHECK),
            "N = M = max_req_input_len = "
                + m
                + ": passes the tokenizer (N + R < C) and is refused by the scheduler (N ≥ M)");
    return new AdmissionPlan.Prompts(List.of(s1, s4));
  }
}

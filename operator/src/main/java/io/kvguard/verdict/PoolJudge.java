package io.kvguard.verdict;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The one decision function: a pure function of the promise and what the engine reported.
 *
 * <p>Capacity rules first, then version rules; the verdict's reason is the failing rule that comes
 * first in the precedence of {@link GateReason}, and the message lists every failure. An engine
 * that exposes no pool ({@link PoolObservation.PoolSource#CONTEXT_LENGTH_ONLY}) is judged on its
 * context length alone: it must reach contextWindow x minPoolRatio, or the pod is refused as
 * EngineContextTooShort; when it does, the reason is ContextLengthSufficient, never PoolSufficient.
 * An absent or non-release engine version matters only where a rule needs it (a minEngineVersion,
 * or an advisory about the engine in its disaggregation mode): then it refuses the pod as
 * EngineVersionUnknown unless the role allows unknown versions. An advisory whose fixed release is
 * named by a post-mortem alone ({@link EngineAdvisories.Fix.Claimed}) refuses the releases before
 * it, and a pod at or after it, or of unknown version, as KnownUnsafeEngine too: the version proves
 * nothing there, only the rejection probe through the prefill/decode router can ({@link
 * VersionRules#routerProbeDecides}), and the message says what the user can do until then.
 *
 * <p>A figure that is only an upper bound of the GPU pool ({@link
 * PoolObservation#upperBoundOnly()}) can refuse a pod (a bound below the requirement means the pool
 * is below it too) but never verifies it as PoolSufficient: when every rule passes, the pod is
 * inconclusive (PoolUpperBoundOnly), unless the engine guarantees its context length fits its pool
 * and that context length meets the requirement (ContextLengthSufficient), or the role declares the
 * block count exact ({@code blockCountIsPool}) and the engine's answer does not contradict it.
 */
public final class PoolJudge {
  private static final List<GateReason> PRECEDENCE =
      List.of(
          GateReason.PoolTooSmall,
          GateReason.EngineContextTooShort,
          GateReason.EngineContextExceedsPool,
          GateReason.KnownUnsafeEngine,
          GateReason.EngineVersionTooOld,
          GateReason.EngineVersionUnknown);

  /**
   * 2^40 tokens: a thousand times today's largest pools, and far below where sums and ratios
   * overflow.
   */
  static final long PLAUSIBLE_TOKENS = 1L << 40;

  private PoolJudge() {}

  private record Finding(GateReason reason, String message) {}

  public static PoolVerdict judge(PoolPolicy policy, ProbeOutcome outcome) {
    if (outcome instanceof ProbeOutcome.Failed failed) {
      return new PoolVerdict(Verdict.Unknown, GateReason.ProbeFailed, failed.cause());
    }
    PoolObservation seen = ((ProbeOutcome.Observed) outcome).observation();
    long pool = seen.poolTokens();
    if (pool < 1) {
      return new PoolVerdict(
          Verdict.Unknown,
          GateReason.ProbeFailed,
          "engine reported a KV pool of " + pool + " tokens");
    }
    // Figures no engine holds are garbage, not capacity: a pool or context of 2^63 - 1 would pass
    // every check.
    if (pool > PLAUSIBLE_TOKENS || seen.engineContextTokens().orElse(0) > PLAUSIBLE_TOKENS) {
      return new PoolVerdict(
          Verdict.Unknown,
          GateReason.ProbeFailed,
          "engine reported a KV pool of "
              + pool
              + " tokens"
              + seen.engineContextTokens().stream()
                  .mapToObj(c -> " and a context of " + c + " tokens")
                  .findFirst()
                  .orElse("")
              + ", beyond what any engine holds (2^40 tokens): not a measurement");
    }
    boolean bound = seen.upperBoundOnly() && !declaredExact(policy, seen);
    List<Finding> findings =
        new ArrayList<>(
            seen.poolExposed() ? capacity(policy, seen, bound) : contextOnly(policy, seen));
    StringBuilder versionClause = new StringBuilder();
    findings.addAll(versions(policy.versions(), seen, versionClause));
    if (!findings.isEmpty()) {
      findings.sort(Comparator.comparingInt(f -> rank(f.reason())));
      return new PoolVerdict(
          Verdict.Refused,
          findings.get(0).reason(),
          findings.stream().map(Finding::message).collect(Collectors.joining("; ")));
    }
    if (bound) {
      return boundOnly(policy, seen, versionClause);
    }
    if (!seen.poolExposed()) {
      return new PoolVerdict(
          Verdict.Verified,
          GateReason.ContextLengthSufficient,
          "engine exposes no KV pool: its context length "
              + pool
              + " tokens, used as the bound, >= context window "
              + policy.contextWindow()
              + " × "
              + policy.minPoolRatio()
              + versionClause);
    }
    String engineContext =
        seen.engineContextTokens().isPresent()
            ? ", engine context " + seen.engineContextTokens().getAsLong() + " tokens"
            : ", engine reports no context length";
    String declared =
        seen.upperBoundOnly()
            ? ", the engine's block count taken as its GPU pool on the role's declaration blockCountIsPool"
            : "";
    return new PoolVerdict(
        Verdict.Verified,
        GateReason.PoolSufficient,
        "KV pool "
            + pool
            + " tokens >= context window "
            + policy.contextWindow()
            + " × "
            + policy.minPoolRatio()
            + engineContext
            + declared
            + versionClause
            + caveats(seen));
  }

  /**
   * The figure's own caveats, repeated in a verified message so the user reads what the verdict
   * rests on.
   */
  private static String caveats(PoolObservation seen) {
    return seen.figureCaveats().stream().map(caveat -> "; " + caveat).collect(Collectors.joining());
  }

  /**
   * The role's declaration lifts an upper bound, unless the engine's own answer shows it is more
   * than the pool.
   */
  private static boolean declaredExact(PoolPolicy policy, PoolObservation seen) {
    return policy.blockCountIsPool()
        && seen.poolSource() != PoolObservation.PoolSource.UPPER_BOUND_SHOWN;
  }

  /**
   * Every rule passed against an upper bound: only a context length the engine guarantees it holds
   * can verify.
   */
  private static PoolVerdict boundOnly(
      PoolPolicy policy, PoolObservation seen, StringBuilder versionClause) {
    String required = "context window " + policy.contextWindow() + " × " + policy.minPoolRatio();
    String figure =
        "KV figure "
            + seen.poolTokens()
            + " tokens is only an upper bound of the GPU pool ("
            + seen.boundCaveat()
            + ")";
    if (seen.poolSource() == PoolObservation.PoolSource.UPPER_BOUND_CONTEXT_HELD) {
      long context = seen.engineContextTokens().getAsLong();
      if (BigDecimal.valueOf(context).compareTo(requiredPool(policy)) >= 0) {
        return new PoolVerdict(
            Verdict.Verified,
            GateReason.ContextLengthSufficient,
            "engine context "
                + context
                + " tokens >= "
                + required
                + ", and the engine refuses to start unless one request of its context length"
                + " fits its KV cache, so the pool holds at least that; the "
                + figure
                + versionClause);
      }
      return new PoolVerdict(
          Verdict.Unknown,
          GateReason.PoolUpperBoundOnly,
          figure
              + "; the engine context "
              + context
              + " tokens, which the engine guarantees its pool holds, is below "
              + required);
    }
    String contradicted =
        policy.blockCountIsPool()
            ? "; the role declares blockCountIsPool, but the engine's own answer shows the figure is more than its GPU pool"
            : "";
    return new PoolVerdict(
        Verdict.Unknown,
        GateReason.PoolUpperBoundOnly,
        figure + ", so it cannot show the pool holds " + required + contradicted);
  }

  private static List<Finding> capacity(PoolPolicy policy, PoolObservation seen, boolean bound) {
    long pool = seen.poolTokens();
    long window = policy.contextWindow();
    String named =
        bound
            ? "KV pool at most " + pool + " tokens (an upper bound)"
            : "KV pool " + pool + " tokens";
    List<Finding> findings = new ArrayList<>();
    if (BigDecimal.valueOf(pool).compareTo(requiredPool(policy)) < 0) {
      findings.add(
          new Finding(
              GateReason.PoolTooSmall,
              named + " < context window " + window + " × " + policy.minPoolRatio()));
    }
    if (seen.engineContextTokens().isPresent()) {
      long engineContext = seen.engineContextTokens().getAsLong();
      if (engineContext < window) {
        findings.add(
            new Finding(
                GateReason.EngineContextTooShort,
                "engine context " + engineContext + " tokens < context window " + window));
      }
      if (engineContext > pool && !policy.allowEngineContextAbovePool()) {
        findings.add(
            new Finding(
                GateReason.EngineContextExceedsPool,
                "engine context "
                    + engineContext
                    + " tokens > "
                    + (bound ? "KV pool at most " : "KV pool ")
                    + pool
                    + " tokens: prompts between the two reach the engine's over-pool rejection"
                    + " path; lower the engine's --context-length to at most the pool"));
      }
    }
    return findings;
  }

  /**
   * No pool to compare: the context length is the bound, and the pool's headroom ratio applies to
   * it.
   */
  private static List<Finding> contextOnly(PoolPolicy policy, PoolObservation seen) {
    long context = seen.poolTokens();
    if (BigDecimal.valueOf(context).compareTo(requiredPool(policy)) < 0) {
      return List.of(
          new Finding(
              GateReason.EngineContextTooShort,
              "engine exposes no KV pool: its context length "
                  + context
                  + " tokens, used as the bound, < context window "
                  + policy.contextWindow()
                  + " × "
                  + policy.minPoolRatio()));
    }
    return List.of();
  }

  /** Version findings; {@code clause} receives what a verified message says about the version. */
  private static List<Finding> versions(
      VersionRules rules, PoolObservation seen, StringBuilder clause) {
    String reported = seen.engineVersion();
    EngineVersion version = reported == null ? null : EngineVersion.parse(reported);
    String named = reported == null ? "engine reports no version" : "engine version " + reported;
    List<String> needing = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    List<String> leftToRouter = new ArrayList<>();

    for (EngineAdvisories.Advisory advisory : rules.concerning(seen.disaggregationMode())) {
      if (!advisory.refuses()) {
        // No verified fixed release: it warns (EngineAdvisories.warnings) and never refuses.
        continue;
      }
      EngineVersion fixedIn = advisory.fixedIn().orElseThrow();
      boolean olderRelease = version != null && version.isRelease() && version.isOlderThan(fixedIn);
      if (advisory.fix() instanceof EngineAdvisories.Fix.Claimed claimed
          && !olderRelease
          && !rules.routerProbeDecides()) {
        // A release a post-mortem alone names as fixed is no evidence: at or after it, and where
        // the version is unknown, the pod stays shut until the path is measured.
        findings.add(
            new Finding(
                advisory.reason(), notClearedByVersion(advisory, claimed, named, version, seen)));
        continue;
      }
      if (advisory.fix() instanceof EngineAdvisories.Fix.Claimed && !olderRelease) {
        leftToRouter.add(advisory.id());
      }
      if (version == null || !version.isRelease()) {
        needing.add(
            "the advisory for "
                + advisory.engine()
                + " before "
                + fixedIn
                + modeClause(seen.disaggregationMode()));
      } else if (version.isOlderThan(fixedIn)) {
        findings.add(new Finding(advisory.reason(), named + ": " + advisory.message()));
      }
    }
    if (rules.minEngineVersion().isPresent()) {
      EngineVersion minimum = rules.minEngineVersion().get();
      if (!minimum.isRelease()) {
        findings.add(
            new Finding(
                GateReason.EngineVersionTooOld,
                "spec minEngineVersion is not a release version (e.g. 0.5.22), so no engine version can meet it"));
      } else if (version == null || !version.isRelease()) {
        needing.add("minEngineVersion " + minimum);
      } else if (version.isOlderThan(minimum)) {
        findings.add(
            new Finding(GateReason.EngineVersionTooOld, named + " < minEngineVersion " + minimum));
      }
    }

    String unknown = reported == null ? named : named + " is not a release version";
    if (!needing.isEmpty() && !rules.allowUnknownVersions()) {
      findings.add(
          new Finding(
              GateReason.EngineVersionUnknown,
              unknown
                  + ", so it cannot be checked against "
                  + String.join(" and ", needing)
                  + "; set allowUnknownVersions: true on the role to accept it"));
    } else if (!needing.isEmpty()) {
      clause
          .append(", ")
          .append(unknown)
          .append(" (allowed by allowUnknownVersions; not checked against ")
          .append(String.join(" and ", needing))
          .append(')');
    } else if (reported != null) {
      clause
          .append(", ")
          .append(named)
          .append(version.isRelease() ? "" : " (not a release version)");
    }
    if (!leftToRouter.isEmpty()) {
      clause
          .append(" (advisory ")
          .append(String.join(", ", leftToRouter))
          .append(
              ": its fixed release is named by a post-mortem alone, so the rejection probe"
                  + " through the prefill/decode router decides, not the version)");
    }
    return findings;
  }

  /**
   * Why a pod at or after a claimed fixed release, or of unknown version, is not cleared: the
   * release is named by an outside account alone, and what can prove the pod instead.
   */
  private static String notClearedByVersion(
      EngineAdvisories.Advisory advisory,
      EngineAdvisories.Fix.Claimed claimed,
      String named,
      EngineVersion version,
      PoolObservation seen) {
    String which =
        version == null
            ? named + modeClause(seen.disaggregationMode())
            : named
                + (version.isRelease() ? "" : " (not a release version)")
                + modeClause(seen.disaggregationMode());
    String cleared =
        version != null && version.isRelease()
            ? "reaching release " + claimed.release() + " does not clear advisory " + advisory.id()
            : "it cannot be shown to be at or after release "
                + claimed.release()
                + ", and reaching that release would not clear advisory "
                + advisory.id()
                + " either";
    return which
        + ": "
        + cleared
        + ", because that release is "
        + claimed.source()
        + "; "
        + claimed.proof();
  }

  private static String modeClause(String mode) {
    return mode == null ? "" : " in disaggregation mode " + mode;
  }

  private static int rank(GateReason reason) {
    int index = PRECEDENCE.indexOf(reason);
    return index < 0 ? PRECEDENCE.size() : index;
  }

  /** contextWindow x minPoolRatio, rounded up, computed exactly so no window can overflow it. */
  static BigDecimal requiredPool(PoolPolicy policy) {
    return BigDecimal.valueOf(policy.contextWindow())
        .multiply(BigDecimal.valueOf(policy.minPoolRatio()))
        .setScale(0, RoundingMode.CEILING);
  }
}

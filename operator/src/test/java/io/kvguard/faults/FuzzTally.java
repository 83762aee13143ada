package io.kvguard.faults;

import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.Verdict;
import java.util.ArrayList;
import java.util.List;

/**
 * Counts one engine's fuzz run and keeps the first few cases that broke an invariant, for the
 * failure message.
 */
final class FuzzTally {
  final String engine;
  final long seed;
  int cases;
  int mutated;
  int verified;
  int refused;
  int failed;
  int truthBelowWindow;
  int openedBelowWindow;
  int poolAboveTruth;
  int exceptions;
  int payloadLeaks;
  int boundVerifiedAsPool;
  final List<String> violations = new ArrayList<>();

  FuzzTally(String engine, long seed) {
    this.engine = engine;
    this.seed = seed;
  }

  void record(
      long truePool,
      long required,
      boolean wasMutated,
      ProbeOutcome outcome,
      PoolVerdict verdict,
      String answer) {
    cases++;
    if (wasMutated) {
      mutated++;
    }
    if (truePool < required) {
      truthBelowWindow++;
    }
    if (verdict.verdict() == Verdict.Verified) {
      verified++;
    } else if (verdict.verdict() == Verdict.Refused) {
      refused++;
    } else {
      failed++;
    }
    if (verdict.verified() && truePool < required) {
      openedBelowWindow++;
      keep("gate opened, true pool " + truePool + " < " + required + ": " + answer);
    }
    if (outcome instanceof ProbeOutcome.Observed seen
        && seen.observation().poolTokens() > truePool) {
      poolAboveTruth++;
      keep(
          "reported pool "
              + seen.observation().poolTokens()
              + " > true pool "
              + truePool
              + ": "
              + answer);
    }
  }

  /**
   * An upper bound of the GPU pool (a summed or host-inclusive block count, a hybrid model's block
   * product) may verify a pod as PoolSufficient only on the role's declaration, and never when the
   * answer itself shows it is more than the pool.
   */
  void checkBound(PoolPolicy policy, ProbeOutcome outcome, PoolVerdict verdict, String answer) {
    if (!(outcome instanceof ProbeOutcome.Observed seen)
        || !seen.observation().upperBoundOnly()
        || verdict.reason() != GateReason.PoolSufficient) {
      return;
    }
    if (!policy.blockCountIsPool()
        || seen.observation().poolSource() == PoolObservation.PoolSource.UPPER_BOUND_SHOWN) {
      boundVerifiedAsPool++;
      keep("upper bound verified as PoolSufficient without a declaration: " + answer);
    }
  }

  /**
   * A planted secret reached what kvguard would write (failure cause, verdict message, notes or
   * version).
   */
  void leak(String answer) {
    payloadLeaks++;
    keep("planted secret echoed: " + answer);
  }

  void exception(Throwable e, String answer) {
    cases++;
    exceptions++;
    keep("probe threw " + e + ": " + answer);
  }

  private void keep(String violation) {
    if (violations.size() < 5) {
      violations.add(
          violation.length() > 2_000 ? violation.substring(0, 2_000) + "..." : violation);
    }
  }

  String summary() {
    return String.format(
        "fuzz engine=%s seed=%d cases=%d mutated=%d verified=%d refused=%d failed=%d"
            + " truePoolBelowWindow=%d gatesOpenedBelowWindow=%d poolAboveTruth=%d exceptions=%d payloadLeaks=%d"
            + " boundVerifiedAsPool=%d",
        engine,
        seed,
        cases,
        mutated,
        verified,
        refused,
        failed,
        truthBelowWindow,
        openedBelowWindow,
        poolAboveTruth,
        exceptions,
        payloadLeaks,
        boundVerifiedAsPool);
  }
}

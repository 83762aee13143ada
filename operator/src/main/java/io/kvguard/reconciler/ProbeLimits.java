package io.kvguard.reconciler;

import java.time.Duration;

/**
 * How many probes run at once: in all ({@code concurrency} threads), for the pods of one namespace
 * (a tenant can hold at most these), and for rejection probes, which run on threads of their own
 * because they may take minutes. A probe running longer than {@code hungAfter} is hung: it gives
 * its namespace's slot and its thread's place back and is counted on a budget of its own, at most
 * {@code hungProbeLimit} in all and {@code concurrencyPerNamespace} for one namespace (0: no
 * budget, a probe holds its slot until it ends). Rejection probes have a hung budget of their own
 * by the same rule: the same threshold and limit in all, one for one namespace.
 */
public record ProbeLimits(
    int concurrency,
    int concurrencyPerNamespace,
    int rejectionConcurrency,
    int hungProbeLimit,
    Duration hungAfter) {

  /** Hung probes in all, by default (KVGUARD_HUNG_PROBE_LIMIT). */
  public static final int DEFAULT_HUNG_PROBE_LIMIT = 256;

  /**
   * When a probe counts as hung. An engine that answers does so in milliseconds (issue 28 §4: a pod
   * in an innocent namespace is verified within one probe period, at least 1 s, plus its own probe
   * time); a probe past this only moves to another budget, nothing is cut short.
   */
  public static final Duration DEFAULT_HUNG_AFTER = Duration.ofMillis(500);

  public ProbeLimits {
    if (concurrency < 1 || concurrencyPerNamespace < 1 || rejectionConcurrency < 1) {
      throw new IllegalArgumentException("probe concurrency limits must be at least 1");
    }
    if (hungProbeLimit < 0 || hungAfter.isNegative() || hungAfter.isZero()) {
      throw new IllegalArgumentException(
          "the hung probe limit must be at least 0 and its threshold positive");
    }
  }

  public ProbeLimits(int concurrency, int concurrencyPerNamespace, int rejectionConcurrency) {
    this(
        concurrency,
        concurrencyPerNamespace,
        rejectionConcurrency,
        DEFAULT_HUNG_PROBE_LIMIT,
        DEFAULT_HUNG_AFTER);
  }

  /** The hung budget of the pool probes' executor. */
  TenantFairExecutor.Hung hung() {
    return hungProbeLimit == 0
        ? TenantFairExecutor.Hung.NEVER
        : new TenantFairExecutor.Hung(
            hungAfter, hungProbeLimit, Math.min(hungProbeLimit, concurrencyPerNamespace));
  }

  /**
   * The hung budget of the rejection probes' executor (issue 28 §4 applied to them): four
   * namespaces of engines that accept the prompt and never answer held its four threads for the
   * whole rejection timeout, and every other namespace's rejection proofs (and so their gates)
   * waited. The same threshold and limit in all as the pool probes'; one per namespace, as one
   * rejection probe per namespace runs at once. A rejection probe that legitimately runs long only
   * moves to this budget: nothing is cut short.
   */
  TenantFairExecutor.Hung rejectionHung() {
    return hungProbeLimit == 0
        ? TenantFairExecutor.Hung.NEVER
        : new TenantFairExecutor.Hung(hungAfter, hungProbeLimit, 1);
  }
}

package io.kvguard.reconciler;

/**
 * How many probes run at once: in all ({@code concurrency} threads), for the pods of one namespace
 * (a tenant can hold at most these), and for rejection probes, which run on threads of their own
 * because they may take minutes.
 */
public record ProbeLimits(int concurrency, int concurrencyPerNamespace, int rejectionConcurrency) {

  public ProbeLimits {
    if (concurrency < 1 || concurrencyPerNamespace < 1 || rejectionConcurrency < 1) {
      throw new IllegalArgumentException("probe concurrency limits must be at least 1");
    }
  }
}

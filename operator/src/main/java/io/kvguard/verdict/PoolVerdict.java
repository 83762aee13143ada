package io.kvguard.verdict;

import java.util.Objects;

/** A verdict with the reason users filter on and a message that carries the numbers. */
public record PoolVerdict(Verdict verdict, GateReason reason, String message) {

  public PoolVerdict {
    Objects.requireNonNull(verdict, "verdict");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
  }

  public static PoolVerdict awaitingProbe(String message) {
    return new PoolVerdict(Verdict.Unknown, GateReason.AwaitingProbe, message);
  }

  public boolean verified() {
    return verdict == Verdict.Verified;
  }
}

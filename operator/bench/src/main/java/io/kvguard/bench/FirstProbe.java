package io.kvguard.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * When the engines first heard from the subject (floor or operator) after it was told to go.
 * Everything before is the subject's own start (classes, informers, leader election); everything
 * after is the work, which is what the floors and the operator can be compared on once their starts
 * are told apart.
 */
final class FirstProbe {
  private final AtomicLong armedAt = new AtomicLong();
  private final AtomicLong firstAt = new AtomicLong();

  /** From now on, the next probe is the subject's first. */
  void arm() {
    firstAt.set(0);
    armedAt.set(System.nanoTime());
  }

  void probed() {
    if (armedAt.get() != 0) {
      firstAt.compareAndSet(0, System.nanoTime());
    }
  }

  /** Milliseconds from {@link #arm} to the first probe; -1 if none came. */
  long millis() {
    long first = firstAt.get();
    return first == 0 ? -1 : (first - armedAt.get()) / 1_000_000;
  }
}

package io.kvguard.bench;

import java.util.function.BooleanSupplier;

/**
 * Polling waits for the benchmark program (a program, not a test: no Awaitility on its classpath).
 */
final class Waits {
  private Waits() {}

  static void await(String what, int seconds, BooleanSupplier condition) {
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "benchmark gave up waiting for: " + what + " (" + seconds + " s)");
      }
      sleep(5);
    }
  }

  static void sleep(long millis) {
    sleep(millis, 0);
  }

  static void sleep(long millis, int nanos) {
    try {
      Thread.sleep(millis, nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

package io.kvguard.customresource;

/**
 * The unsigned, saturating arithmetic of cel-go's cost estimator (google/cel-go v0.26.0,
 * checker/cost.go: addUint64NoOverflow, multiplyUint64NoOverflow, multiplyByCostFactor), on Java
 * longs read as uint64.
 */
final class Uint64 {
  static final long MAX = -1L; // math.MaxUint64
  private static final double TWO_TO_64 = Math.scalb(1.0, 64);

  private Uint64() {}

  static long add(long x, long y) {
    long sum = x + y;
    return Long.compareUnsigned(sum, x) < 0 ? MAX : sum;
  }

  static long multiply(long x, long y) {
    if (y != 0 && Long.compareUnsigned(x, Long.divideUnsigned(MAX, y)) > 0) {
      return MAX;
    }
    return x * y;
  }

  /** x times a cost factor, rounded up (multiplyByCostFactor). */
  static long multiplyByFactor(long x, double factor) {
    double value = toDouble(x);
    if (value > 0 && factor > 0 && value > TWO_TO_64 / factor) {
      return MAX;
    }
    double ceil = Math.ceil(value * factor);
    if (ceil >= TWO_TO_64) {
      return MAX;
    }
    return fromDouble(ceil);
  }

  static long min(long x, long y) {
    return Long.compareUnsigned(x, y) <= 0 ? x : y;
  }

  static long max(long x, long y) {
    return Long.compareUnsigned(x, y) >= 0 ? x : y;
  }

  static boolean greaterThan(long x, long y) {
    return Long.compareUnsigned(x, y) > 0;
  }

  static String format(long x) {
    return x == MAX
        ? "2^64-1 (saturated)"
        : String.format("%,d", new java.math.BigInteger(Long.toUnsignedString(x)));
  }

  private static double toDouble(long x) {
    double d = (double) (x >>> 1) * 2.0;
    return d + (x & 1);
  }

  private static long fromDouble(double d) {
    if (d < Math.scalb(1.0, 63)) {
      return (long) d;
    }
    return ((long) (d / 2)) << 1;
  }
}

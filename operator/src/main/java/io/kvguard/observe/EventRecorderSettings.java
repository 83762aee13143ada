package io.kvguard.observe;

import java.time.Duration;

/**
 * How fast kvguard writes Events, and how long it keeps trying.
 *
 * @param burst writes about one involved object allowed at once (client-go's spam filter: 25)
 * @param refill one more such write each this long once the burst is spent
 * @param firstRetry wait after the first failed write of an Event; doubled after each further
 *     failure
 * @param maxRetry the longest wait between two attempts (a longer Retry-After from the server wins)
 * @param maxAttempts attempts of one write before what it announces is dropped (and counted)
 */
public record EventRecorderSettings(
    int burst, Duration refill, Duration firstRetry, Duration maxRetry, int maxAttempts) {

  /**
   * Production: a mass failure of one ModelDeployment is announced at once (25 writes), then at
   * most one write per 10 s, which carries everything that happened in between. A write refused
   * with 429 or 5xx is tried again after 1, 2, 4 ... 60 s, at most 8 times (about 2 minutes), like
   * client-go's 12 tries 10 s apart.
   */
  public static EventRecorderSettings standard() {
    return new EventRecorderSettings(
        25, Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(60), 8);
  }
}

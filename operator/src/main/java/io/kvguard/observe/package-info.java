/**
 * What a user watches, fed by one {@link io.kvguard.observe.PassReport} per pass (and by probes as
 * they finish): Kubernetes Events on verdict transitions, kvguard's Prometheus metrics and the log
 * lines about them.
 *
 * <p>Events do not storm: one Event object per (involved object, type, reason), found again by a
 * deterministic name, whose {@code count}, {@code lastTimestamp} and {@code message} are updated;
 * writes per involved object are rate limited (a token bucket), and what the limit holds back is
 * merged into the next write instead of being dropped. Modelled on client-go's {@code
 * tools/record/events_cache.go}. Metric names are public API: dashboards and alerts use them.
 */
package io.kvguard.observe;

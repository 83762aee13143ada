/** kvguard's own Prometheus metrics (names are public API: dashboards and alerts use them). */
package io.kvguard.metrics;

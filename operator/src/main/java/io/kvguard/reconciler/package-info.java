/**
 * The imperative shell around the verdict: selects a ModelDeployment's pods, schedules probes, asks the
 * verdict core, writes gates through {@link io.kvguard.gate.PodGate}, and reports status, events and metrics.
 */
package io.kvguard.reconciler;

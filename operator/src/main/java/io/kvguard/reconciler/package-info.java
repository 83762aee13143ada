/**
 * The imperative shell around the verdict: a pass selects a ModelDeployment's pods, assesses them
 * (a pure function of spec, pods, last results and clock), has the probes it wants sent, writes
 * gates through {@link io.kvguard.gate.GateWriter}, builds the status, and hands one {@link
 * io.kvguard.observe.PassReport} to the observer for events, metrics and logs.
 */
package io.kvguard.reconciler;

/**
 * One probe per engine behind {@link io.kvguard.probe.EngineProbe}: each reads the engine's own
 * figures over HTTP and returns a {@link io.kvguard.verdict.ProbeOutcome}. Probes never write to
 * the cluster, never throw, and never let a byte of an engine's answer into a message (answers may
 * carry API keys).
 */
package io.kvguard.probe;

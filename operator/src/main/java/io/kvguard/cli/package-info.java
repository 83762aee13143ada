/**
 * The jar's subcommands besides the operator itself: {@code demo} (the incident replayed on an in-process API
 * server), {@code check} (preflight one live engine with the operator's own probe and verdict code) and
 * {@code fake-engine} (the engine stand-in that the end-to-end suite deploys on real clusters).
 */
package io.kvguard.cli;

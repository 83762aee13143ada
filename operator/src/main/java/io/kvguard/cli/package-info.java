/**
 * The operator jar's subcommand besides the operator itself: {@code check} (preflight one live
 * engine with the operator's own probe and verdict code).
 */
package io.kvguard.cli;

/**
 * The functional core: what a pod's engine reported, judged against what the model promises.
 * Nothing here talks to a cluster or an engine, so every rule is tested with plain values.
 */
package io.kvguard.verdict;

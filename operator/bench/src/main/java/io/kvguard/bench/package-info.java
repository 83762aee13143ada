/**
 * The scale benchmark (issue 7): the real operator against the embedded API server and thousands of
 * fake engines in one JVM, measured beside a floor loop that does only the unavoidable requests.
 */
package io.kvguard.bench;

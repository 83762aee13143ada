/**
 * The operator's own listening ports that any pod may reach (health, webhook): served by one thread
 * that never blocks on a connection, so connections that dawdle cannot keep a well-behaved client
 * out.
 */
package io.kvguard.net;

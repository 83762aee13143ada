/**
 * Stand-ins for a cluster and for engines, used by the demo, the benchmark and the tests alike: an
 * embedded Kubernetes API server (fabric8's mock server in CRUD mode, with its known gaps closed)
 * and fake engines that serve the real answer shapes of each engine on loopback.
 */
package io.kvguard.testkit;

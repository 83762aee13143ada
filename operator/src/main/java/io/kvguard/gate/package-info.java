/**
 * The only code that writes pods: the {@code kvguard.io/pool-verified} condition on {@code pods/status} and
 * the {@code kvguard.io/verified} routing label. Patches are planned by pure functions and written as JSON
 * patches guarded by the pod's UID and resourceVersion, so the kubelet's conditions are never replaced and
 * a pod recreated under the same name is never written by mistake.
 */
package io.kvguard.gate;

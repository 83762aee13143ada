/**
 * The only code that writes pods: the {@code kvguard.io/pool-verified} condition on {@code
 * pods/status}, with each policy's verdict record (annotation {@code kvguard.io/verdicts}) in the
 * same patch, and the {@code kvguard.io/verified} routing label. Patches are planned by pure
 * functions and written as JSON patches guarded by the pod's UID and the resourceVersion they were
 * planned on, so the kubelet's conditions are never replaced, a pod recreated under the same name
 * is never written by mistake, and a writer whose read is older than the pod (a deposed leader)
 * cannot undo a newer decision.
 */
package io.kvguard.gate;

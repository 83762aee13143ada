package io.kvguard;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the leader-election Lease back when a leader stops (what client-go calls release on cancel,
 * which JOSDK does not do): the next replica takes over within its retry period instead of waiting
 * out the lease, so a rolling update does not leave new pods ungated for the lease's 15 s.
 */
final class LeaseRelease {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRelease.class);

  private LeaseRelease() {}

  /**
   * Clears the holder if it is still {@code identity}; anything else (not ours, gone, a conflict)
   * is left alone.
   */
  static void release(KubernetesClient client, String namespace, String name, String identity) {
    try {
      Lease lease = client.leases().inNamespace(namespace).withName(name).get();
      if (lease == null
          || lease.getSpec() == null
          || !Objects.equals(identity, lease.getSpec().getHolderIdentity())) {
        return;
      }
      lease.getSpec().setHolderIdentity(null);
      // An update with the version just read: if another replica took the lease meanwhile, this is
      // refused.
      client.resource(lease).update();
      LOG.info("released the lease {}/{} held by {}", namespace, name, identity);
    } catch (KubernetesClientException e) {
      LOG.info(
          "lease {}/{} not released ({}); it expires on its own", namespace, name, e.getCode());
    }
  }
}

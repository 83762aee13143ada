package io.kvguard.probe;

/**
 * Where a router Service answers: in the operator, the cluster IP kvguard read the Service with
 * just before the proof, never its name. The operator's pod would resolve {@code
 * <service>.<namespace>.svc} through its DNS search list, {@code svc.<cluster domain>} before
 * {@code <cluster domain>} (kubernetes/kubernetes {@code pkg/kubelet/network/dns/dns.go}, {@code
 * generateSearchesForDNSClusterFirst}, with ndots:5), and CoreDNS reads {@code
 * <service>.<namespace>.svc.svc.<cluster domain>} as the endpoint {@code <service>} of the Service
 * {@code <namespace>} in the namespace {@code svc} (coredns/coredns {@code
 * plugin/kubernetes/parse.go}, {@code parseRequest}, at 328e5a8d): whoever owns a namespace named
 * svc would answer for every namespace's router. Tests with fake routers on loopback give another.
 */
@FunctionalInterface
public interface RouterAddress {
  RouterAddress CLUSTER_IP = (service, namespace, clusterIP) -> clusterIP;

  /**
   * @param clusterIP the Service's {@code spec.clusterIP} as read before the proof
   */
  String host(String service, String namespace, String clusterIP);
}

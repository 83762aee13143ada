package io.kvguard.probe;

/**
 * Where a Service answers, by name: the cluster's DNS ({@code <service>.<namespace>.svc}) in the
 * operator; tests with fake routers on loopback give another.
 */
@FunctionalInterface
public interface RouterAddress {
  RouterAddress CLUSTER_DNS = (service, namespace) -> service + "." + namespace + ".svc";

  String host(String service, String namespace);
}

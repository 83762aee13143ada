package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kvguard.probe.EngineText;

/**
 * Whether a proof may be sent through the Service spec.rejectionProbe.router names (issue 26 §2):
 * read just before each proof, since the proof carries the engines' bearer token (as {@code
 * Authorization}, and as each worker's {@code api_key}) to whatever answers at the Service's name.
 * Only a Service whose endpoints Kubernetes writes from pods of its own namespace is accepted; what
 * Kubernetes does with the others is read in its source:
 *
 * <ul>
 *   <li>{@code ExternalName}: "a service consists of only a reference to an external name that
 *       kubedns or equivalent will return as a CNAME record, with no exposing or proxying of any
 *       pods involved" (kubernetes/api v0.36.3, the published copy of kubernetes/kubernetes v1.36.3
 *       {@code staging/src/k8s.io/api}, {@code core/v1/types.go:5793-5796}; {@code externalName},
 *       {@code :6099-6104}): the name resolves wherever its creator chose, in or out of the
 *       cluster.
 *   <li>No selector: "the service is assumed to have an external process managing its endpoints,
 *       which Kubernetes will not modify" ({@code core/v1/types.go:5990-5994}); the EndpointSlice
 *       controller skips ExternalName Services and Services whose selector is nil: "these services
 *       will receive endpoint slices that are created out-of-band via the REST API"
 *       (kubernetes/kubernetes {@code pkg/controller/endpointslice/endpointslice_controller.go}
 *       {@code syncService}, at commit 003e86297d18). Hand-made EndpointSlices or Endpoints can
 *       name any address, another tenant's proof router included. An empty selector is read as
 *       none, as the type's comment says ("If empty or not present").
 * </ul>
 *
 * A Service with a selector gets its endpoints from pods of its own namespace that the selector
 * matches ({@code syncService} lists pods in {@code service.Namespace}). kvguard does not read
 * EndpointSlices: one made by hand and labelled with the Service's name is not seen here.
 */
@FunctionalInterface
public interface RouterServices {

  /** What the read found. */
  sealed interface Check {
    /**
     * The Service routes to pods its selector picks in its own namespace.
     *
     * @param clusterIP its {@code spec.clusterIP}, where the proof is sent ({@link
     *     io.kvguard.probe.RouterAddress})
     */
    record Usable(String clusterIP) implements Check {}

    /** Not sent: the reason says what to change (RejectionProbeInconclusive). */
    record Refused(String reason) implements Check {}

    /** The Service could not be read; tried again a period later (ProbeFailed). */
    record Unreadable(String reason) implements Check {}
  }

  /**
   * @param port spec.rejectionProbe.router.port, where on the cluster IP the proof is sent
   */
  Check check(String namespace, String service, int port);

  /** How the cause of a proof not sent because of its Service starts. */
  String NOT_SENT = "not sent: router Service ";

  /**
   * Whether a proof's outcome is a refusal of its Service: looked at again a period later, since
   * fixing the Service changes nothing in the proof's key.
   */
  static boolean refusedService(io.kvguard.verdict.RejectionOutcome outcome) {
    return outcome instanceof io.kvguard.verdict.RejectionOutcome.Inconclusive inconclusive
        && inconclusive.cause().startsWith(NOT_SENT);
  }

  /** Reads the Service with one GET per proof (proofs are sent once per key, not per pass). */
  static RouterServices reading(KubernetesClient client) {
    return (namespace, name, port) -> {
      Service service;
      try {
        service = client.services().inNamespace(namespace).withName(name).get();
      } catch (KubernetesClientException e) {
        return new Check.Unreadable(
            "the router Service "
                + name
                + " could not be read (HTTP "
                + e.getCode()
                + "): kvguard reads it before each proof to know where the prompts and the"
                + " engines' token would go; the chart grants get on services wherever kvguard"
                + " watches");
      }
      return judge(namespace, name, port, service);
    };
  }

  /** The verdict on a Service as read (null: it does not exist). Pure. */
  static Check judge(String namespace, String name, int port, Service service) {
    String what = name + " (spec.rejectionProbe.router.service)";
    String fix =
        "; point spec.rejectionProbe.router.service at a Service of type ClusterIP in namespace "
            + namespace
            + " whose selector picks the router's pods (docs/rejection-probe.md, \"Where the"
            + " prompts go\")";
    if (service == null) {
      return new Check.Refused(
          what + " does not exist in namespace " + namespace + ", so nothing was sent" + fix);
    }
    io.fabric8.kubernetes.api.model.ServiceSpec spec =
        service.getSpec() == null
            ? new io.fabric8.kubernetes.api.model.ServiceSpec()
            : service.getSpec();
    // "Defaults to ClusterIP" (core/v1/types.go:6045 at v0.36.3).
    String type = spec.getType() == null ? "ClusterIP" : spec.getType();
    if (type.equals("ExternalName")) {
      String target =
          spec.getExternalName() == null
              ? "(no externalName)"
              : EngineText.safe(spec.getExternalName());
      return new Check.Refused(
          what
              + " is of type ExternalName (a DNS alias for "
              + target
              + ", with no pods of this namespace behind it): the proof and the engines' token"
              + " would go wherever that name points, so nothing was sent"
              + fix);
    }
    if (spec.getSelector() == null || spec.getSelector().isEmpty()) {
      return new Check.Refused(
          what
              + " is of type "
              + EngineText.safe(type)
              + " without a selector: Kubernetes leaves its endpoints to whoever writes its"
              + " Endpoints or EndpointSlices, which may name any address (another namespace's"
              + " router, a host outside the cluster), so nothing was sent"
              + fix);
    }
    // The proof goes to the cluster IP, not the name (RouterAddress): a Service without one is
    // reached only through DNS. "None" makes it headless; the IP cannot change while the Service
    // keeps its type (kubernetes/api v0.36.3 core/v1/types.go:6000-6016).
    String clusterIP = spec.getClusterIP();
    if (clusterIP == null || clusterIP.isEmpty() || clusterIP.equals("None")) {
      return new Check.Refused(
          what
              + (clusterIP == null || clusterIP.isEmpty()
                  ? " has no cluster IP"
                  : " is headless (clusterIP: None)")
              + ": kvguard sends the proof to the cluster IP it read, never to the Service's name,"
              + " which the operator's DNS search list could resolve in another namespace (one named"
              + " svc), so nothing was sent"
              + fix);
    }
    // Only a port the Service lists is forwarded from the cluster IP to its pods ("The port that
    // will be exposed by this service", TCP unless set: core/v1/types.go:6239-6264 at v0.36.3);
    // any other port of that IP reaches no router pod.
    java.util.List<io.fabric8.kubernetes.api.model.ServicePort> ports =
        spec.getPorts() == null ? java.util.List.of() : spec.getPorts();
    boolean forwarded =
        ports.stream()
            .anyMatch(
                p ->
                    p.getPort() != null
                        && p.getPort() == port
                        && (p.getProtocol() == null || p.getProtocol().equals("TCP")));
    if (!forwarded) {
      java.util.List<String> listed =
          ports.stream()
              .map(
                  p ->
                      p.getPort()
                          + "/"
                          + EngineText.safe(p.getProtocol() == null ? "TCP" : p.getProtocol()))
              .toList();
      return new Check.Refused(
          what
              + " has no TCP port "
              + port
              + " (spec.rejectionProbe.router.port; it lists "
              + (listed.isEmpty() ? "none" : String.join(", ", listed))
              + "): the cluster IP forwards only the Service's own ports, not its pods'"
              + " targetPort, so nothing was sent"
              + fix);
    }
    return new Check.Usable(clusterIP);
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which router Services a proof may be sent through (issue 26 §2 follow-ups, 1): only those whose
 * endpoints Kubernetes writes from the pods their selector picks in their own namespace.
 */
class RouterServicesTest {
  /** spec.rejectionProbe.router.port, a port the Service lists. */
  private static final int ROUTER_PORT = 30000;

  private static Service service(String type, Map<String, String> selector) {
    return service(type, selector, "10.96.3.7");
  }

  private static Service service(String type, Map<String, String> selector, String clusterIP) {
    return new ServiceBuilder()
        .withNewMetadata()
        .withName("glm-proof-router")
        .withNamespace("inference")
        .endMetadata()
        .withNewSpec()
        .withType(type)
        .withSelector(selector)
        .withClusterIP(clusterIP)
        .withExternalName(type != null && type.equals("ExternalName") ? "evil.example.com" : null)
        .addNewPort()
        .withName("http")
        .withPort(ROUTER_PORT)
        .withNewTargetPort(ROUTER_PORT)
        .endPort()
        .endSpec()
        .build();
  }

  private static RouterServices.Check judge(Service service) {
    return RouterServices.judge("inference", "glm-proof-router", ROUTER_PORT, service);
  }

  private static String refusal(Service service) {
    RouterServices.Check check = judge(service);
    assertThat(check).isInstanceOf(RouterServices.Check.Refused.class);
    return ((RouterServices.Check.Refused) check).reason();
  }

  @Test
  void aServiceWithASelectorIsUsableWhateverItsType() {
    Map<String, String> selector = Map.of("app", "glm-proof-router");
    for (String type : new String[] {null, "ClusterIP", "NodePort", "LoadBalancer"}) {
      assertThat(judge(service(type, selector))).isInstanceOf(RouterServices.Check.Usable.class);
    }
  }

  @Test
  void anExternalNameServiceIsRefusedNamingItsTypeAndTarget() {
    assertThat(refusal(service("ExternalName", null)))
        .contains("is of type ExternalName (a DNS alias for evil.example.com")
        .contains("nothing was sent")
        .contains("a Service of type ClusterIP in namespace inference whose selector");
  }

  /** The selector of an ExternalName Service is ignored (core/v1/types.go:5990-5994). */
  @Test
  void anExternalNameServiceWithASelectorIsStillRefused() {
    assertThat(refusal(service("ExternalName", Map.of("app", "glm-proof-router"))))
        .contains("ExternalName");
  }

  @Test
  void aServiceWithoutASelectorOrWithAnEmptyOneIsRefusedNamingItsType() {
    assertThat(refusal(service("ClusterIP", null)))
        .contains("is of type ClusterIP without a selector");
    assertThat(refusal(service("LoadBalancer", Map.of())))
        .contains("is of type LoadBalancer without a selector");
    assertThat(refusal(service(null, null))).contains("is of type ClusterIP without a selector");
  }

  @Test
  void aMissingServiceIsRefusedAndSaysSo() {
    assertThat(refusal(null))
        .contains("glm-proof-router (spec.rejectionProbe.router.service) does not exist in")
        .contains("namespace inference");
  }

  /**
   * The proof goes to the cluster IP the Service was read with, not to its name: the operator's pod
   * resolves {@code <service>.<namespace>.svc} through its search list, {@code svc.<cluster
   * domain>} before {@code <cluster domain>} (kubernetes/kubernetes {@code
   * pkg/kubelet/network/dns/dns.go} {@code generateSearchesForDNSClusterFirst}, ndots:5), and
   * CoreDNS reads {@code glm-proof-router.inference.svc.svc.<cluster domain>} as the endpoint
   * {@code glm-proof-router} of Service {@code inference} in namespace {@code svc} (coredns/coredns
   * {@code plugin/kubernetes/parse.go} {@code parseRequest}, at 328e5a8d): whoever owns a namespace
   * named svc answers for every namespace's router.
   */
  @Test
  void theProofGoesToTheClusterIpTheServiceWasReadWith() {
    RouterServices.Check check = judge(service("ClusterIP", Map.of("app", "glm-proof-router")));

    assertThat(check).isEqualTo(new RouterServices.Check.Usable("10.96.3.7"));
    assertThat(
            io.kvguard.probe.RouterAddress.CLUSTER_IP.host(
                "glm-proof-router", "inference", "10.96.3.7"))
        .isEqualTo("10.96.3.7");
  }

  /** A headless Service has no cluster IP: its name is resolved as above, so nothing is sent. */
  @Test
  void aHeadlessServiceIsRefused() {
    assertThat(refusal(service("ClusterIP", Map.of("app", "glm-proof-router"), "None")))
        .contains("is headless (clusterIP: None)")
        .contains("nothing was sent");
    assertThat(refusal(service(null, Map.of("app", "glm-proof-router"), null)))
        .contains("has no cluster IP");
  }

  /**
   * The proof goes to {@code <cluster IP>:<port>}; only a port the Service lists is forwarded to
   * its pods ("The port that will be exposed by this service", its protocol TCP unless set
   * otherwise: kubernetes/api v0.36.3 {@code core/v1/types.go:6239-6264}). The pods' port ({@code
   * targetPort}, {@code :6266-6275}) named instead of the Service's, or a port the Service forwards
   * as UDP only, reaches no router pod: nothing is sent, and the reason names the ports the Service
   * has.
   */
  @Test
  void aPortTheServiceDoesNotForwardOverTcpIsRefused() {
    Service targetPortOnly =
        new ServiceBuilder(service("ClusterIP", Map.of("app", "glm-proof-router")))
            .editSpec()
            .withPorts(
                new io.fabric8.kubernetes.api.model.ServicePortBuilder()
                    .withName("http")
                    .withPort(80)
                    .withNewTargetPort(ROUTER_PORT)
                    .build())
            .endSpec()
            .build();
    assertThat(refusal(targetPortOnly))
        .contains("has no TCP port " + ROUTER_PORT)
        .contains("80/TCP")
        .contains("nothing was sent");

    Service udpOnly =
        new ServiceBuilder(service("ClusterIP", Map.of("app", "glm-proof-router")))
            .editSpec()
            .withPorts(
                new io.fabric8.kubernetes.api.model.ServicePortBuilder()
                    .withPort(ROUTER_PORT)
                    .withProtocol("UDP")
                    .build())
            .endSpec()
            .build();
    assertThat(refusal(udpOnly)).contains("has no TCP port " + ROUTER_PORT).contains("30000/UDP");

    Service noPorts =
        new ServiceBuilder(service("ClusterIP", Map.of("app", "glm-proof-router")))
            .editSpec()
            .withPorts(java.util.List.of())
            .endSpec()
            .build();
    assertThat(refusal(noPorts)).contains("has no TCP port " + ROUTER_PORT);
  }

  /** A port listed without a protocol is TCP ("Default is TCP", core/v1/types.go:6239-6243). */
  @Test
  void aListedPortWithoutAProtocolIsTcp() {
    Service service =
        new ServiceBuilder(service("ClusterIP", Map.of("app", "glm-proof-router")))
            .editSpec()
            .withPorts(
                new io.fabric8.kubernetes.api.model.ServicePortBuilder()
                    .withPort(ROUTER_PORT)
                    .build())
            .endSpec()
            .build();
    assertThat(judge(service)).isEqualTo(new RouterServices.Check.Usable("10.96.3.7"));
  }
}

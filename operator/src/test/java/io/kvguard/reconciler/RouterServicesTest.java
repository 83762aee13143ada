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
        .endSpec()
        .build();
  }

  private static RouterServices.Check judge(Service service) {
    return RouterServices.judge("inference", "glm-proof-router", service);
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
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RejectionRouterSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a proof through the router is for: the same pods in any order give the same key; a new
 * image, version, engine container, pod, router or marginTokens gives another.
 */
class RouterProofsKeyTest {
  private static RouterProofs.Member member(
      String pod, String mode, String image, String version, String process) {
    return new RouterProofs.Member(
        pod, "uid-" + pod, mode, image, version, process, null, null, 1_048_577);
  }

  private static final RouterProofs.Member PREFILL =
      member("prefill-0", "prefill", "sha256:aaa", "0.5.22", "containerd://p0@0");
  private static final RouterProofs.Member DECODE =
      member("decode-0", "decode", "sha256:aaa", "0.5.22", "containerd://d0@0");

  private static String key(List<RouterProofs.Member> members, String service, long margin) {
    RejectionRouterSpec router = new RejectionRouterSpec();
    router.setService(service);
    router.setPort(30000);
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    rejection.setMarginTokens(margin);
    rejection.setRouter(router);
    return RouterProofs.hash(RouterProofs.keyOf(router, rejection, "glm", members));
  }

  @Test
  void theSamePodsInAnyOrderAreTheSameProof() {
    assertThat(key(List.of(PREFILL, DECODE), "glm-router", 1))
        .isEqualTo(key(List.of(DECODE, PREFILL), "glm-router", 1))
        .hasSize(16);
  }

  @Test
  void aNewImageVersionContainerPodRouterOrMarginIsAnotherProof() {
    String proven = key(List.of(PREFILL, DECODE), "glm-router", 1);

    assertThat(
            List.of(
                key(
                    List.of(
                        member("prefill-0", "prefill", "sha256:bbb", "0.5.22", "containerd://p0@0"),
                        DECODE),
                    "glm-router",
                    1),
                key(
                    List.of(
                        member("prefill-0", "prefill", "sha256:aaa", "0.5.23", "containerd://p0@0"),
                        DECODE),
                    "glm-router",
                    1),
                key(
                    List.of(
                        member("prefill-0", "prefill", "sha256:aaa", "0.5.22", "containerd://p0@1"),
                        DECODE),
                    "glm-router",
                    1),
                key(
                    List.of(
                        PREFILL,
                        DECODE,
                        member(
                            "prefill-1", "prefill", "sha256:aaa", "0.5.22", "containerd://p1@0")),
                    "glm-router",
                    1),
                key(List.of(PREFILL, DECODE), "other-router", 1),
                key(List.of(PREFILL, DECODE), "glm-router", 2)))
        .doesNotContain(proven)
        .doesNotHaveDuplicates();
  }

  /**
   * registerWorkers changes what is proven (pods added to a proof router, not a router's own
   * workers), so it is another proof; absent or false keeps the key a router had without it.
   */
  @Test
  void registeringWorkersIsAnotherProofAndFalseKeepsTheOldKey() {
    RejectionRouterSpec router = new RejectionRouterSpec();
    router.setService("glm-router");
    router.setPort(30000);
    RejectionProbeSpec rejection = new RejectionProbeSpec();
    rejection.setEnabled(true);
    rejection.setMarginTokens(1L);
    rejection.setRouter(router);
    List<RouterProofs.Member> pods = List.of(PREFILL, DECODE);
    String without = RouterProofs.keyOf(router, rejection, "glm", pods);

    router.setRegisterWorkers(false);
    assertThat(RouterProofs.keyOf(router, rejection, "glm", pods)).isEqualTo(without);
    router.setRegisterWorkers(true);
    assertThat(RouterProofs.keyOf(router, rejection, "glm", pods)).isNotEqualTo(without);
  }

  @Test
  void aRouterWhoseServiceIsNoServiceNameIsASpecProblem() {
    RejectionRouterSpec router = new RejectionRouterSpec();
    router.setService("Glm_Router");
    router.setPort(30000);
    assertThat(router.problem()).hasValueSatisfying(p -> assertThat(p).contains("DNS-1035"));
    router.setService("glm-router");
    router.setPort(70000);
    assertThat(router.problem()).hasValue("spec.rejectionProbe.router.port must be 1-65535");
    router.setPort(30000);
    assertThat(router.problem()).isEmpty();
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.RoleSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodSelectionTest {
  private static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withUid("uid-" + name)
        .endMetadata()
        .build();
  }

  @Test
  void aPodSeveralRolesSelectIsJudgedOnceByTheFirstOfThemInSpecOrder() {
    RoleSpec prefill = role("prefill", Engine.SGLANG, Map.of("app", "glm"));
    RoleSpec decode = role("decode", Engine.VLLM, Map.of("app", "glm"));
    Pod shared = pod("shared");
    Pod onlyDecode = pod("decode-0");
    Map<String, List<Pod>> selects =
        Map.of("prefill", List.of(shared), "decode", List.of(onlyDecode, shared));

    List<PodSelection.Selected> selected =
        PodSelection.firstRoleWins(List.of(prefill, decode), role -> selects.get(role.getName()));

    assertThat(selected)
        .extracting(s -> s.pod().getMetadata().getName() + "/" + s.role().getName())
        .containsExactly("shared/prefill", "decode-0/decode");
  }

  @Test
  void theSamePodNameUnderANewUidIsAnotherPod() {
    RoleSpec serve = role("serve", Engine.SGLANG, Map.of("app", "glm"));
    Pod old = pod("serve-0");
    Pod recreated = new PodBuilder(old).editMetadata().withUid("uid-new").endMetadata().build();

    assertThat(PodSelection.firstRoleWins(List.of(serve), role -> List.of(old, recreated)))
        .hasSize(2);
  }
}

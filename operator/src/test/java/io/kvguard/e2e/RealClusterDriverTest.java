package io.kvguard.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.FakeEngineOptions;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The real-cluster driver's pieces that need no cluster: the pod it deploys and how it reads its
 * settings.
 */
class RealClusterDriverTest {

  private final Map<String, String> saved = new java.util.HashMap<>();

  @BeforeEach
  void clearProperties() {
    for (String key :
        java.util.List.of(RealClusterDriver.PROPERTY_KUBECONFIG, "kvguard.e2e.operator")) {
      String value = System.clearProperty(key);
      if (value != null) {
        saved.put(key, value);
      }
    }
  }

  @AfterEach
  void restoreProperties() {
    System.clearProperty(RealClusterDriver.PROPERTY_KUBECONFIG);
    System.clearProperty("kvguard.e2e.operator");
    saved.forEach(System::setProperty);
  }

  @Test
  void theEnginePodRunsTheFakeEngineBehindTheGateWithItsStateOnAnEmptyDir() {
    FakeEngineOptions engine = FakeEngineOptions.sglang(681_280, 2, 1_048_576, "prefill");

    Pod pod =
        RealClusterDriver.enginePod(
            "ns",
            "glm-prefill-0",
            Map.of("role", "prefill"),
            engine,
            "kvguard-fake-engine:e2e",
            "IfNotPresent");

    assertThat(pod.getSpec().getReadinessGates())
        .extracting(g -> g.getConditionType())
        .containsExactly(GateNames.CONDITION_TYPE);
    assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Always");
    Container container = pod.getSpec().getContainers().get(0);
    assertThat(container.getImage()).isEqualTo("kvguard-fake-engine:e2e");
    assertThat(container.getArgs().get(0)).isEqualTo("fake-engine");
    assertThat(String.join(" ", container.getArgs()))
        .contains(
            String.join(" ", engine.toArgs()),
            "--port 30000",
            "--admin-port 30001",
            "--state-file /state/engine.properties");
    assertThat(container.getPorts())
        .extracting(ContainerPort::getName, ContainerPort::getContainerPort)
        .contains(org.assertj.core.groups.Tuple.tuple(ClusterDriver.ENGINE_PORT, 30000));
    assertThat(container.getVolumeMounts())
        .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/state"));
    assertThat(pod.getSpec().getVolumes()).anySatisfy(v -> assertThat(v.getEmptyDir()).isNotNull());
  }

  @Test
  void settingsComeFromSystemPropertiesWithTheHomeDirectoryExpanded() {
    assertThat(RealClusterDriver.Settings.configured()).isFalse();
    System.setProperty(RealClusterDriver.PROPERTY_KUBECONFIG, "~/.kube/config");

    RealClusterDriver.Settings settings = RealClusterDriver.Settings.fromSystemProperties();

    assertThat(RealClusterDriver.Settings.configured()).isTrue();
    assertThat(settings.kubeconfig())
        .isEqualTo(Path.of(System.getProperty("user.home"), ".kube", "config"));
    assertThat(settings.localOperator()).isTrue();
    assertThat(settings.image()).isEqualTo("kvguard-fake-engine:e2e");
  }

  @Test
  void anUnknownOperatorModeIsRejected() {
    System.setProperty(RealClusterDriver.PROPERTY_KUBECONFIG, "/tmp/none");
    System.setProperty("kvguard.e2e.operator", "remote");

    assertThatThrownBy(RealClusterDriver.Settings::fromSystemProperties)
        .hasMessageContaining("kvguard.e2e.operator must be local or deployed");
  }
}

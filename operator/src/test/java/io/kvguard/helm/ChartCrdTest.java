package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Helm installs crds/ once and never upgrades it; the chart's hook Job applies the same CRD before
 * every install and upgrade. Both copies must be the generated CRD, and the hook must do nothing
 * else.
 */
class ChartCrdTest {
  private static final String CRD_FILE = "modeldeployments.kvguard.io-v1.yml";
  private static final String HOOK = "kvguard-crd-upgrade";
  private static RenderedChart chart;

  @BeforeAll
  static void render() {
    chart = RenderedChart.renderWithHooks("");
  }

  @Test
  void theChartsCrdsAreTheRepositorysCrds() throws IOException {
    assertThat(fileNames(RenderedChart.CHART.resolve("crds")))
        .isEqualTo(fileNames(Path.of("../crds")))
        .containsExactly(CRD_FILE);
    assertThat(Files.readString(RenderedChart.CHART.resolve("crds").resolve(CRD_FILE)))
        .isEqualTo(Files.readString(Path.of("../crds", CRD_FILE)));
  }

  private static List<String> fileNames(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void theHookConfigMapCarriesTheCrdByteForByte() throws IOException {
    ConfigMap crds = chart.named(ConfigMap.class, HOOK);
    String crd = Files.readString(RenderedChart.CHART.resolve("crds").resolve(CRD_FILE));
    assertThat(crds.getData()).containsOnlyKeys(CRD_FILE);
    assertThat(crds.getData().get(CRD_FILE).strip()).isEqualTo(crd.strip());
    CustomResourceDefinition parsed =
        new KubernetesSerialization()
            .unmarshal(crds.getData().get(CRD_FILE), CustomResourceDefinition.class);
    assertThat(parsed.getMetadata().getName()).isEqualTo("modeldeployments.kvguard.io");
  }

  @Test
  void everyHookObjectRunsBeforeInstallAndUpgradeAndIsCleanedUp() {
    List<HasMetadata> hooks =
        List.of(
            chart.named(ServiceAccount.class, HOOK),
            chart.named(ClusterRole.class, HOOK),
            chart.named(ClusterRoleBinding.class, HOOK),
            chart.named(ConfigMap.class, HOOK),
            chart.named(Job.class, HOOK));
    for (HasMetadata hook : hooks) {
      Map<String, String> annotations = RenderedChart.hookAnnotations(hook);
      assertThat(annotations)
          .as(hook.getKind())
          .containsEntry("helm.sh/hook", "pre-install,pre-upgrade")
          .containsEntry("helm.sh/hook-delete-policy", "before-hook-creation,hook-succeeded")
          .containsKey("helm.sh/hook-weight");
    }
    int jobWeight = weight(chart.named(Job.class, HOOK));
    for (HasMetadata prerequisite : hooks.subList(0, 4)) {
      assertThat(weight(prerequisite))
          .as("%s is created before the Job", prerequisite.getKind())
          .isLessThan(jobWeight);
    }
  }

  private static int weight(HasMetadata hook) {
    return Integer.parseInt(RenderedChart.hookAnnotations(hook).get("helm.sh/hook-weight"));
  }

  @Test
  void theJobServerSideAppliesTheMountedCrdAsARestrictedPod() {
    Job job = chart.named(Job.class, HOOK);
    PodSpec pod = job.getSpec().getTemplate().getSpec();
    assertThat(pod.getServiceAccountName()).isEqualTo(HOOK);
    assertThat(pod.getRestartPolicy()).isEqualTo("Never");
    assertThat(job.getSpec().getActiveDeadlineSeconds()).isPositive();
    Container kubectl = pod.getContainers().get(0);
    assertThat(kubectl.getImage()).isEqualTo("registry.k8s.io/kubectl:v1.34.1");
    assertThat(kubectl.getCommand()).isNullOrEmpty();
    assertThat(kubectl.getArgs())
        .containsExactly(
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kvguard-chart",
            "--cache-dir=/tmp/kube-cache",
            "--filename=/crds/" + CRD_FILE);
    assertThat(kubectl.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/crds");
              assertThat(m.getReadOnly()).isTrue();
            });
    assertThat(pod.getVolumes())
        .anySatisfy(v -> assertThat(v.getConfigMap().getName()).isEqualTo(HOOK));
    assertThat(kubectl.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(kubectl.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(kubectl.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(kubectl.getResources().getLimits()).containsKeys("cpu", "memory");
    // The hook's pod is not one of the operator's: the Service, PDB and NetworkPolicy must not
    // select it.
    assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
        .containsEntry("app.kubernetes.io/component", "crd-upgrade");
  }

  @Test
  void theHooksImageCanBePinnedByDigest() {
    String digest = "sha256:" + "cd".repeat(32);
    Job job =
        RenderedChart.renderWithHooks(
                "crds: {upgradeJob: {image: {repository: registry.example/kubectl, "
                    + "tag: v1.34.1, digest: '"
                    + digest
                    + "'}}}")
            .named(Job.class, HOOK);
    assertThat(job.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo("registry.example/kubectl@" + digest);
  }

  @Test
  void turningTheHookOffLeavesOnlyCrdsAndAManualStep() {
    RenderedChart without = RenderedChart.renderWithHooks("crds: {upgradeJob: {enabled: false}}");
    assertThat(without.kinds()).doesNotContain("Job", "ConfigMap");
    assertThat(without.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .doesNotContain(HOOK);
  }

  @Test
  void theHookIsNotPartOfTheReleaseManifest() {
    // Helm leaves hooks out of the release manifest; so the Job missing here (and present in
    // renderWithHooks) proves the real helm.sh/hook annotation is on it, and it never lingers as a
    // release resource.
    assertThat(RenderedChart.render("").kinds()).doesNotContain("Job");
  }
}

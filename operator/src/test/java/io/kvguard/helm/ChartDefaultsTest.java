package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.kvguard.KvguardConfig;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * `helm template` with the chart's default values: what a platform team reviews before the first
 * install.
 */
class ChartDefaultsTest {
  private static RenderedChart chart;
  private static Deployment deployment;
  private static Container operator;

  @BeforeAll
  static void render() {
    chart = RenderedChart.render("");
    deployment = chart.one(Deployment.class);
    operator = operatorContainer(chart);
  }

  /** The operator's container in a rendered chart. */
  static Container operatorContainer(RenderedChart rendered) {
    return rendered.one(Deployment.class).getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  static Map<String, String> env(Container container) {
    return container.getEnv().stream()
        .filter(e -> e.getValue() != null)
        .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
  }

  @Test
  void rendersOnlyTheCoreObjects() {
    assertThat(chart.kinds().sorted().toList())
        .containsExactly(
            "ClusterRole",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleBinding",
            "Deployment",
            "MutatingWebhookConfiguration",
            "PodDisruptionBudget",
            "Role",
            "Role",
            "Role",
            "RoleBinding",
            "RoleBinding",
            "RoleBinding",
            "Service",
            "Service",
            "ServiceAccount",
            // The policies confining kvguard's own writes (pods; its webhook's caBundle), on by
            // default where the cluster serves them (1.30+, as RenderedChart renders).
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBinding");
  }

  @Test
  void twoReplicasElectALeaderThroughTheOperatorsLeaseInTheReleaseNamespace() {
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
    assertThat(deployment.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    Map<String, String> env = env(operator);
    assertThat(env)
        .containsEntry("KVGUARD_LEADER_ELECTION", "true")
        .containsEntry("KVGUARD_LEADER_ELECTION_NAMESPACE", RenderedChart.NAMESPACE);
    EnvVar podName =
        operator.getEnv().stream()
            .filter(e -> e.getName().equals("POD_NAME"))
            .findFirst()
            .orElseThrow();
    assertThat(podName.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
    // The configuration the operator reads from this environment is the one the chart means.
    KvguardConfig config =
        KvguardConfig.fromEnvironment(
            Map.of(
                "KVGUARD_NAMESPACES", env.get("KVGUARD_NAMESPACES"),
                "KVGUARD_METRICS_PORT", env.get("KVGUARD_METRICS_PORT"),
                "KVGUARD_LEADER_ELECTION", env.get("KVGUARD_LEADER_ELECTION"),
                "KVGUARD_LEADER_ELECTION_NAMESPACE", env.get("KVGUARD_LEADER_ELECTION_NAMESPACE"),
                "KVGUARD_PROBE_CONCURRENCY", env.get("KVGUARD_PROBE_CONCURRENCY"),
                "KVGUARD_PROBE_MAX_BODY_BYTES", env.get("KVGUARD_PROBE_MAX_BODY_BYTES"),
                "KVGUARD_VERDICT_KEY_SECRET", env.get("KVGUARD_VERDICT_KEY_SECRET"),
                "POD_NAME", "kvguard-7d9f-abcde"));
    assertThat(config.namespaces()).isEmpty();
    assertThat(config.leaderElection()).isTrue();
    assertThat(config.leaseNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(config.metricsPort()).isEqualTo(8080);
    assertThat(config.probeConcurrency()).isEqualTo(32);
    // Issue 20: answers are streamed and only what a probe reads is kept; 2 MiB bounds the time an
    // answer takes.
    assertThat(config.probeMaxBodyBytes()).isEqualTo(2 * 1024 * 1024);
    assertThat(config.identity()).isEqualTo("kvguard-7d9f-abcde");
    assertThat(config.verdictKeySecret()).isEqualTo("kvguard-verdict-key");
    assertThat(env).containsEntry("KVGUARD_LOG_LEVEL", "INFO");
  }

  @Test
  void podAndContainerFollowTheRestrictedPodSecurityStandard() {
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    SecurityContext container = operator.getSecurityContext();
    assertThat(container.getRunAsNonRoot()).isTrue();
    assertThat(container.getReadOnlyRootFilesystem()).isTrue();
    assertThat(container.getAllowPrivilegeEscalation()).isFalse();
    assertThat(container.getPrivileged()).isFalse();
    assertThat(container.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(container.getCapabilities().getAdd()).isNullOrEmpty();
    assertThat(container.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void theJvmGetsAWritableTmpAndBoundedMemory() {
    assertThat(operator.getVolumeMounts())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/tmp");
              assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE);
            });
    assertThat(deployment.getSpec().getTemplate().getSpec().getVolumes())
        .singleElement()
        .satisfies(v -> assertThat(v.getEmptyDir()).isNotNull());
    assertThat(env(operator).get("JAVA_TOOL_OPTIONS"))
        .contains("-XX:+ExitOnOutOfMemoryError")
        .contains("-XX:MaxRAMPercentage=");
    assertThat(operator.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(operator.getResources().getLimits()).containsKeys("cpu", "memory");
    assertThat(Quantity.getAmountInBytes(operator.getResources().getLimits().get("memory")))
        .isGreaterThanOrEqualTo(
            Quantity.getAmountInBytes(operator.getResources().getRequests().get("memory")));
  }

  @Test
  void livenessAndReadinessUseTheOperatorsHealthEndpointsOnAPortOfTheirOwn() {
    assertThat(operator.getPorts())
        .hasSize(3)
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("webhook");
              assertThat(p.getContainerPort()).isEqualTo(9443);
            })
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("metrics");
              assertThat(p.getContainerPort()).isEqualTo(8080);
            })
        .anySatisfy(
            p -> {
              assertThat(p.getName()).isEqualTo("health");
              assertThat(p.getContainerPort()).isEqualTo(8081);
            });
    assertHttpProbe(operator.getLivenessProbe(), "/healthz");
    assertHttpProbe(operator.getStartupProbe(), "/healthz");
    assertHttpProbe(operator.getReadinessProbe(), "/readyz");
    Map<String, String> env = env(operator);
    KvguardConfig config =
        KvguardConfig.fromEnvironment(
            Map.of(
                "KVGUARD_HEALTH_PORT", env.get("KVGUARD_HEALTH_PORT"),
                "KVGUARD_METRICS_BIND_ADDRESS", env.get("KVGUARD_METRICS_BIND_ADDRESS")));
    assertThat(config.healthPort()).isEqualTo(8081);
    assertThat(config.metricsBindAddress()).isEqualTo("0.0.0.0");
  }

  @Test
  void probeLimitsReachTheOperator() {
    Map<String, String> env = env(operator);
    KvguardConfig config =
        KvguardConfig.fromEnvironment(
            Map.of(
                "KVGUARD_PROBE_CONCURRENCY_PER_NAMESPACE",
                    env.get("KVGUARD_PROBE_CONCURRENCY_PER_NAMESPACE"),
                "KVGUARD_REJECTION_PROBE_CONCURRENCY",
                    env.get("KVGUARD_REJECTION_PROBE_CONCURRENCY"),
                "KVGUARD_REJECTION_MAX_PROMPT_TOKENS",
                    env.get("KVGUARD_REJECTION_MAX_PROMPT_TOKENS")));
    assertThat(config.probeConcurrencyPerNamespace()).isEqualTo(4);
    assertThat(config.rejectionProbeConcurrency()).isEqualTo(4);
    assertThat(config.rejectionMaxPromptTokens()).isEqualTo(4_194_304);
  }

  @Test
  void twoHundredFiftySixProbesMayHangByDefault() {
    // Issue 28 §4: engines that accept connections and never answer, in any number of namespaces,
    // must not hold the probe threads other namespaces need.
    Map<String, String> env = env(operator);
    assertThat(env).containsEntry("KVGUARD_HUNG_PROBE_LIMIT", "256");
    assertThat(
            KvguardConfig.fromEnvironment(
                    Map.of("KVGUARD_HUNG_PROBE_LIMIT", env.get("KVGUARD_HUNG_PROBE_LIMIT")))
                .hungProbeLimit())
        .isEqualTo(256);
    assertThat(env(operatorContainer(RenderedChart.render("engineProbes: {hungLimit: 0}"))))
        .containsEntry("KVGUARD_HUNG_PROBE_LIMIT", "0");
  }

  @Test
  void oneNamespaceListsItsPodsAtATimeByDefault() {
    // More at once ran the chart's 256 MiB heap out of memory at 5,000 guarded pods
    // (docs/benchmarks.md).
    assertThat(env(operator)).containsEntry("KVGUARD_POD_LIST_CONCURRENCY", "1");
    assertThat(env(operatorContainer(RenderedChart.render("podCache: {listConcurrency: 3}"))))
        .containsEntry("KVGUARD_POD_LIST_CONCURRENCY", "3");
  }

  @Test
  void theHealthPortMustDifferFromTheMetricsPort() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> RenderedChart.render("healthProbes: {port: 8080}"))
        .hasMessageContaining("healthProbes.port must differ from metrics.port");
  }

  private static void assertHttpProbe(Probe probe, String path) {
    assertThat(probe).isNotNull();
    assertThat(probe.getHttpGet().getPath()).isEqualTo(path);
    assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("health");
    assertThat(probe.getPeriodSeconds()).isPositive();
    assertThat(probe.getFailureThreshold()).isPositive();
  }

  @Test
  void aDisruptionBudgetKeepsOneReplicaThroughDrains() {
    PodDisruptionBudget pdb = chart.one(PodDisruptionBudget.class);
    assertThat(pdb.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(pdb.getSpec().getMinAvailable()).isNull();
    assertThat(pdb.getSpec().getSelector().getMatchLabels())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
    assertThat(
            deployment.getSpec().getStrategy().getRollingUpdate().getMaxUnavailable().getIntVal())
        .isZero();
  }

  @Test
  void replicasPreferDifferentNodes() {
    var terms =
        deployment
            .getSpec()
            .getTemplate()
            .getSpec()
            .getAffinity()
            .getPodAntiAffinity()
            .getPreferredDuringSchedulingIgnoredDuringExecution();
    assertThat(terms)
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.getPodAffinityTerm().getTopologyKey())
                  .isEqualTo("kubernetes.io/hostname");
              assertThat(t.getPodAffinityTerm().getLabelSelector().getMatchLabels())
                  .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
            });
  }

  @Test
  void theMetricsServiceTargetsTheOperatorPods() {
    Service service = chart.named(Service.class, "kvguard-metrics");
    assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
    assertThat(service.getSpec().getSelector())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(service.getSpec().getPorts())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getName()).isEqualTo("metrics");
              assertThat(p.getPort()).isEqualTo(8080);
              assertThat(p.getTargetPort().getStrVal()).isEqualTo("metrics");
            });
  }

  @Test
  void theOperatorRunsAsItsOwnServiceAccountWithTheChartsImage() {
    ServiceAccount account = chart.one(ServiceAccount.class);
    assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo(account.getMetadata().getName());
    assertThat(operator.getImage()).isEqualTo("kvguard/kvguard-operator:0.1.0");
  }

  @Test
  void aDigestPinsTheImage() {
    String digest = "sha256:" + "ab".repeat(32);
    Deployment pinned =
        RenderedChart.render(
                "image: {repository: registry.example/kvguard, tag: '9.9', digest: '"
                    + digest
                    + "'}")
            .one(Deployment.class);
    assertThat(pinned.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo("registry.example/kvguard@" + digest);
  }
}

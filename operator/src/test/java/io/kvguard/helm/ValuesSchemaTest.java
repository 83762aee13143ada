package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * values.schema.json and the chart's own checks stop a wrong value at `helm install`/`template`,
 * with a message naming the value, instead of rendering something that fails (or silently
 * misbehaves) in the cluster.
 */
class ValuesSchemaTest {

  static Stream<Arguments> wrongTypes() {
    return Stream.of(
        Arguments.of("replicaCount as a string", "replicaCount: two", "/replicaCount"),
        Arguments.of(
            "leader election as a string",
            "leaderElection: {enabled: \"yes\"}",
            "/leaderElection/enabled"),
        Arguments.of(
            "one namespace instead of a list", "watchNamespaces: inference", "/watchNamespaces"),
        Arguments.of(
            "a namespace that is not a DNS label",
            "watchNamespaces: [Inference_1]",
            "/watchNamespaces/0"),
        Arguments.of("a privileged metrics port", "metrics: {port: 80}", "/metrics/port"),
        Arguments.of("the metrics port as a string", "metrics: {port: \"8080\"}", "/metrics/port"),
        Arguments.of(
            "no probe concurrency", "engineProbes: {concurrency: 0}", "/engineProbes/concurrency"),
        Arguments.of(
            "a writable root filesystem",
            "securityContext: {readOnlyRootFilesystem: false}",
            "/securityContext/readOnlyRootFilesystem"),
        Arguments.of(
            "privilege escalation",
            "securityContext: {allowPrivilegeEscalation: true}",
            "/securityContext/allowPrivilegeEscalation"),
        Arguments.of(
            "an unconfined seccomp profile (the restricted Pod Security Standard refuses it)",
            "securityContext: {seccompProfile: {type: Unconfined}}",
            "/securityContext/seccompProfile/type"),
        Arguments.of(
            "an unconfined seccomp profile for the pod",
            "podSecurityContext: {seccompProfile: {type: Unconfined}}",
            "/podSecurityContext/seccompProfile/type"),
        Arguments.of(
            "a capability added beyond NET_BIND_SERVICE",
            "securityContext: {capabilities: {drop: [ALL], add: [SYS_ADMIN]}}",
            "/securityContext/capabilities/add/0"),
        Arguments.of(
            "capabilities that do not drop ALL",
            "securityContext: {capabilities: {drop: [NET_RAW]}}",
            "/securityContext/capabilities/drop"),
        Arguments.of(
            "a liveness success threshold above 1 (the API server refuses it)",
            "healthProbes: {liveness: {successThreshold: 2}}",
            "/healthProbes/liveness/successThreshold"),
        Arguments.of("a misspelt top-level key", "replicas: 3", "replicas"),
        Arguments.of(
            "a misspelt nested key", "metrics: {serviceMonitor: {intervall: 1m}}", "intervall"),
        Arguments.of("an unknown log level", "logLevel: LOUD", "/logLevel"),
        Arguments.of(
            "an alert duration in words",
            "metrics: {prometheusRule: {podRefused: {for: ten minutes}}}",
            "/metrics/prometheusRule/podRefused/for"),
        Arguments.of(
            "a probe failure ratio above 1",
            "metrics: {prometheusRule: {probesFailing: {ratio: 2}}}",
            "/metrics/prometheusRule/probesFailing/ratio"),
        Arguments.of(
            "an unknown pull policy", "image: {pullPolicy: Sometimes}", "/image/pullPolicy"),
        Arguments.of("a malformed digest", "image: {digest: latest}", "/image/digest"),
        Arguments.of(
            "a malformed digest of the CRD hook's image",
            "crds: {upgradeJob: {image: {digest: 'sha256:abc'}}}",
            "/crds/upgradeJob/image/digest"),
        Arguments.of("a health port below 1024", "healthProbes: {port: 80}", "/healthProbes/port"),
        Arguments.of(
            "a metrics bind address that is a host name",
            "metrics: {bindAddress: localhost}",
            "/metrics/bindAddress"),
        Arguments.of(
            "a negative hung probe limit",
            "engineProbes: {hungLimit: -1}",
            "/engineProbes/hungLimit"),
        Arguments.of(
            "a hung probe limit above 4096 (KvguardConfig refuses it)",
            "engineProbes: {hungLimit: 5000}",
            "/engineProbes/hungLimit"),
        Arguments.of(
            "a rejection prompt cap of zero",
            "engineProbes: {rejection: {maxPromptTokens: 0}}",
            "/engineProbes/rejection/maxPromptTokens"),
        Arguments.of(
            "an engine port out of range",
            "networkPolicy: {engines: {ports: [70000]}}",
            "/networkPolicy/engines/ports/0"),
        Arguments.of(
            "secret names as one string",
            "probeCredentials: {secretNames: engine-token}",
            "/probeCredentials/secretNames"),
        Arguments.of(
            "a ConfigMap name with capitals",
            "probeTls: {configMapNames: [Engine-CA]}",
            "/probeTls/configMapNames/0"),
        Arguments.of("limits as a string", "resources: {limits: 1Gi}", "/resources/limits"),
        Arguments.of(
            "a gate write policy that does nothing on a violation",
            "gateWritePolicy: {validationActions: []}",
            "/gateWritePolicy/validationActions"),
        Arguments.of(
            "the pod write policy switched on with a word",
            "podWritePolicy: {enabled: auto}",
            "/podWritePolicy/enabled"),
        Arguments.of(
            "an API server address without a prefix length",
            "networkPolicy: {apiServer: {cidrs: [10.0.0.1]}}",
            "/networkPolicy/apiServer/cidrs/0"));
  }

  @ParameterizedTest(name = "rejects {0}")
  @MethodSource("wrongTypes")
  void theSchemaRejects(String what, String values, String where) {
    assertThatThrownBy(() -> RenderedChart.render(values))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining(where);
  }

  static Stream<Arguments> inconsistentSettings() {
    return Stream.of(
        Arguments.of(
            "two replicas without leader election",
            "leaderElection: {enabled: false}",
            "replicaCount > 1 needs leaderElection.enabled=true"),
        Arguments.of(
            "probe credentials naming no secret",
            "probeCredentials: {enabled: true}",
            "probeCredentials.enabled=true needs probeCredentials.secretNames"),
        Arguments.of(
            "probe TLS naming no CA bundle",
            "probeTls: {enabled: true}",
            "probeTls.enabled=true needs probeTls.secretNames or probeTls.configMapNames"),
        Arguments.of(
            "a network policy without the API server's address",
            "networkPolicy: {enabled: true}",
            "networkPolicy.enabled=true needs networkPolicy.apiServer.cidrs"),
        Arguments.of(
            "a ServiceMonitor without the metrics Service",
            "metrics: {service: {enabled: false}, serviceMonitor: {enabled: true}}",
            "metrics.serviceMonitor.enabled=true needs metrics.service.enabled=true"),
        Arguments.of(
            "no ServiceAccount and no name",
            "serviceAccount: {create: false}",
            "serviceAccount.name is required"));
  }

  @ParameterizedTest(name = "refuses {0}")
  @MethodSource("inconsistentSettings")
  void theChartRefuses(String what, String values, String message) {
    assertThatThrownBy(() -> RenderedChart.render(values))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(message);
  }

  @Test
  void acceptsTheDocumentedAlternatives() {
    RenderedChart chart =
        RenderedChart.render(
            String.join(
                "\n",
                "replicaCount: 1",
                "leaderElection: {enabled: false}",
                "logLevel: DEBUG",
                "podDisruptionBudget: {maxUnavailable: 50%, unhealthyPodEvictionPolicy: IfHealthyBudget}",
                "networkPolicy: {enabled: true, apiServer: {cidrs: [\"fd00::1/128\"]}, engines: {ports: [http, 30000]}}",
                "serviceAccount: {create: false, name: platform-provided}",
                "resources: {requests: {cpu: 0.5, memory: 1Gi}, limits: {memory: 2Gi}}"));
    assertThat(chart.one(PodDisruptionBudget.class).getSpec().getMaxUnavailable().getStrVal())
        .isEqualTo("50%");
    Deployment deployment = chart.one(Deployment.class);
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(1);
    assertThat(deployment.getSpec().getTemplate().getSpec().getServiceAccountName())
        .isEqualTo("platform-provided");
    assertThat(chart.kinds()).doesNotContain("ServiceAccount");
  }
}

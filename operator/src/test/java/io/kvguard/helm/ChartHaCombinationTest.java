package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The production shape: HA, ServiceMonitor, PrometheusRule, dashboard, NetworkPolicy, namespaced
 * RBAC.
 */
class ChartHaCombinationTest {
  static final String VALUES =
      String.join(
          "\n",
          "replicaCount: 3",
          "watchNamespaces: [inference, batch]",
          "assumeApiVersions: [monitoring.coreos.com/v1]",
          "metrics:",
          "  serviceMonitor: {enabled: true, labels: {release: kube-prometheus-stack}, interval: 15s}",
          "  prometheusRule: {enabled: true, labels: {release: kube-prometheus-stack}, podRefused: {for: 7m}}",
          "  dashboard: {enabled: true}",
          "networkPolicy:",
          "  enabled: true",
          "  apiServer: {cidrs: [10.96.0.1/32, 172.18.0.2/32], ports: [6443]}",
          "");
  private static RenderedChart chart;
  private static Deployment deployment;

  @BeforeAll
  static void render() {
    chart = RenderedChart.render(VALUES);
    deployment = chart.one(Deployment.class);
  }

  @Test
  void replicasElectALeaderAndWatchOnlyTheListedNamespaces() {
    assertThat(deployment.getSpec().getReplicas()).isEqualTo(3);
    Map<String, String> env =
        ChartDefaultsTest.env(deployment.getSpec().getTemplate().getSpec().getContainers().get(0));
    assertThat(env)
        .containsEntry("KVGUARD_LEADER_ELECTION", "true")
        .containsEntry("KVGUARD_LEADER_ELECTION_NAMESPACE", RenderedChart.NAMESPACE)
        .containsEntry("KVGUARD_NAMESPACES", "inference,batch");
    assertThat(chart.one(PodDisruptionBudget.class).getSpec().getMaxUnavailable().getIntVal())
        .isEqualTo(1);
    // Cluster-wide only the webhook's caBundle (its own MutatingWebhookConfiguration, by name:
    // ChartRbacTest).
    assertThat(chart.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly("kvguard-webhook-ca");
    assertThat(chart.all(Role.class))
        .extracting(r -> r.getMetadata().getNamespace())
        .containsExactlyInAnyOrder(
            "inference",
            "batch",
            RenderedChart.NAMESPACE,
            RenderedChart.NAMESPACE,
            RenderedChart.NAMESPACE);
  }

  @Test
  void theNetworkPolicyAllowsOnlyScrapesAndAdmissionsInAndTheApiServerEnginesAndDnsOut() {
    NetworkPolicy policy = chart.one(NetworkPolicy.class);
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .isEqualTo(deployment.getSpec().getSelector().getMatchLabels());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");

    // Scrapes only from the monitoring namespace by default (a namespace name no tenant can claim),
    // and no rule at all for the health port: the kubelet's probes come from the node. The
    // webhook's port from any source by default (networkPolicy.webhookFrom: the API server's
    // address depends on the cluster), that port only.
    assertThat(policy.getSpec().getIngress()).hasSize(2);
    assertThat(policy.getSpec().getIngress().get(0))
        .satisfies(
            in -> {
              assertThat(in.getPorts())
                  .extracting(NetworkPolicyPort::getPort)
                  .containsExactly(new IntOrString("metrics"));
              assertThat(in.getFrom())
                  .singleElement()
                  .satisfies(
                      peer -> {
                        assertThat(peer.getNamespaceSelector().getMatchLabels())
                            .containsExactly(
                                Map.entry("kubernetes.io/metadata.name", "monitoring"));
                        assertThat(peer.getPodSelector()).isNull();
                      });
            });
    assertThat(policy.getSpec().getIngress().get(1))
        .satisfies(
            in -> {
              assertThat(in.getPorts())
                  .extracting(NetworkPolicyPort::getPort)
                  .containsExactly(new IntOrString("webhook"));
              assertThat(in.getFrom()).isNullOrEmpty();
            });

    List<NetworkPolicyEgressRule> egress = policy.getSpec().getEgress();
    assertThat(egress)
        .hasSize(3)
        .allSatisfy(
            rule -> {
              // A rule with no peers or no ports would open every destination or every port.
              assertThat(rule.getTo()).isNotEmpty();
              assertThat(rule.getPorts()).isNotEmpty();
            });
    NetworkPolicyEgressRule apiServer = egress.get(0);
    assertThat(apiServer.getTo())
        .extracting(p -> p.getIpBlock().getCidr())
        .containsExactly("10.96.0.1/32", "172.18.0.2/32");
    assertThat(apiServer.getPorts()).extracting(p -> p.getPort().getIntVal()).containsExactly(6443);

    NetworkPolicyEgressRule engines = egress.get(1);
    assertThat(engines.getTo())
        .extracting(NetworkPolicyPeer::getNamespaceSelector)
        .extracting(s -> s.getMatchLabels().get("kubernetes.io/metadata.name"))
        .containsExactly("inference", "batch");
    assertThat(engines.getTo()).allSatisfy(p -> assertThat(p.getIpBlock()).isNull());
    assertThat(engines.getPorts())
        .extracting(p -> p.getPort().getIntVal())
        .containsExactly(30000, 8000, 8080, 80);

    NetworkPolicyEgressRule dns = egress.get(2);
    assertThat(dns.getTo())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getNamespaceSelector().getMatchLabels())
                  .containsEntry("kubernetes.io/metadata.name", "kube-system");
              assertThat(p.getPodSelector().getMatchLabels()).containsEntry("k8s-app", "kube-dns");
            });
    assertThat(dns.getPorts())
        .extracting(p -> p.getPort().getIntVal() + "/" + p.getProtocol())
        .containsExactlyInAnyOrder("53/UDP", "53/TCP");
  }

  @Test
  void clusterWideTheEnginesMayBeInAnyNamespaceButOnlyOnEnginePorts() {
    NetworkPolicy policy =
        RenderedChart.render(
                "networkPolicy: {enabled: true, apiServer: {cidrs: [10.0.0.1/32]}, "
                    + "dns: {enabled: false}}")
            .one(NetworkPolicy.class);
    assertThat(policy.getSpec().getEgress()).hasSize(2);
    NetworkPolicyEgressRule engines = policy.getSpec().getEgress().get(1);
    assertThat(engines.getTo())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.getNamespaceSelector()).isNotNull();
              assertThat(p.getNamespaceSelector().getMatchLabels()).isNullOrEmpty();
              assertThat(p.getNamespaceSelector().getMatchExpressions()).isNullOrEmpty();
            });
    assertThat(engines.getPorts()).isNotEmpty();
  }

  @Test
  void theServiceMonitorScrapesTheMetricsService() {
    HasMetadata monitor = chart.kind("ServiceMonitor").get(0);
    assertThat(monitor.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
    assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
    JsonNode spec = RenderedChart.tree(monitor).get("spec");
    Service service = chart.named(Service.class, "kvguard-metrics");
    spec.get("selector")
        .get("matchLabels")
        .fields()
        .forEachRemaining(
            label ->
                assertThat(service.getMetadata().getLabels())
                    .containsEntry(label.getKey(), label.getValue().asText()));
    assertThat(spec.get("namespaceSelector").get("matchNames").get(0).asText())
        .isEqualTo(RenderedChart.NAMESPACE);
    JsonNode endpoint = spec.get("endpoints").get(0);
    assertThat(endpoint.get("port").asText())
        .isEqualTo(service.getSpec().getPorts().get(0).getName());
    assertThat(endpoint.get("path").asText()).isEqualTo("/metrics");
    assertThat(endpoint.get("interval").asText()).isEqualTo("15s");
    // The series' namespace and pod labels name the engine pod, and the alerts and panels group by
    // them.
    assertThat(endpoint.get("honorLabels").asBoolean()).isTrue();
  }

  @Test
  void thePrometheusRuleCarriesTheSevenAlertsWithTheConfiguredDelays() {
    HasMetadata rule = chart.kind("PrometheusRule").get(0);
    assertThat(rule.getMetadata().getLabels()).containsEntry("release", "kube-prometheus-stack");
    List<JsonNode> alerts = alerts(rule);
    assertThat(alerts)
        .extracting(a -> a.get("alert").asText())
        .containsExactly(
            "KvguardPodRefused",
            "KvguardModelNotReady",
            "KvguardProbesFailing",
            "KvguardPodsLabelOnly",
            "KvguardPodsStranded",
            "KvguardNamespaceUnwatched",
            "KvguardMetricsAbsent");
    assertThat(alerts.get(0).get("for").asText()).isEqualTo("7m");
    assertThat(alerts)
        .allSatisfy(
            a -> {
              assertThat(a.get("labels").get("severity").asText()).isNotBlank();
              assertThat(a.get("annotations").get("summary").asText()).isNotBlank();
              assertThat(a.get("annotations").get("description").asText()).isNotBlank();
            });
    // Prometheus' own templates reach Prometheus unrendered by Helm.
    assertThat(alerts.get(0).get("annotations").get("summary").asText())
        .contains("{{ $labels.pod }}");
  }

  @Test
  void alertsCanBeSwitchedOffOneByOne() {
    HasMetadata rule =
        RenderedChart.render(
                RenderedChart.MONITORING_API
                    + "metrics: {prometheusRule: {enabled: true, metricsAbsent: {enabled: false},"
                    + " probesFailing: {enabled: false}, labelOnlyPods: {enabled: false},"
                    + " strandedPods: {enabled: false}, unwatchedNamespaces: {enabled: false}}}")
            .kind("PrometheusRule")
            .get(0);
    assertThat(alerts(rule))
        .extracting(a -> a.get("alert").asText())
        .containsExactly("KvguardPodRefused", "KvguardModelNotReady");
  }

  static List<JsonNode> alerts(HasMetadata prometheusRule) {
    JsonNode groups = RenderedChart.tree(prometheusRule).get("spec").get("groups");
    return StreamSupport.stream(groups.spliterator(), false)
        .flatMap(g -> StreamSupport.stream(g.get("rules").spliterator(), false))
        .toList();
  }

  @Test
  void theDashboardConfigMapHoldsTheChartsDashboardForTheGrafanaSidecar() throws Exception {
    ConfigMap dashboard = chart.one(ConfigMap.class);
    assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
    assertThat(dashboard.getData().get("kvguard.json").strip())
        .isEqualTo(
            Files.readString(RenderedChart.CHART.resolve("dashboards/kvguard.json")).strip());
  }

  @Test
  void noOptionalObjectWithoutItsSwitch() {
    assertThat(RenderedChart.render("").kinds())
        .doesNotContain("NetworkPolicy", "ServiceMonitor", "PrometheusRule", "ConfigMap");
  }
}

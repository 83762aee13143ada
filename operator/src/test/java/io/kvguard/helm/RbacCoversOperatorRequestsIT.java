package io.kvguard.helm;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.mockwebserver.http.MockResponse;
import io.kvguard.KvguardConfig;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.helm.RenderedRbac.Access;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EmbeddedApiServer.Request;
import io.kvguard.testkit.EngineShapes;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.webhook.SelfManagedCertificates;
import io.kvguard.webhook.WebhookSettings;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The mock API server enforces no RBAC, so this runs the operator with the exact configuration the
 * chart's Deployment gives it, records every request it makes through a gate's whole life (verify,
 * open, a conflict on a pod write and on the finalizer, policy deleted, gates opened by the
 * finalizer, shutdown), and checks each one against the RBAC the chart renders. A request the chart
 * does not allow would be a 403 in a real cluster; a verb the chart grants and no request uses
 * fails the test too (least privilege).
 */
class RbacCoversOperatorRequestsIT {
  private static final String TEST_AGENT = "kvguard-rbac-it";
  private static final String NS = OperatorHarness.NAMESPACE;
  private static final long WINDOW = 131_072;

  /**
   * Granted verbs the scenario cannot exercise, each with where the operator uses it. (Probe
   * credentials' get on named Secrets is rendered only when probeCredentials.enabled;
   * ProbeCredentialsIT uses it.) The router Service's get needs a prefill/decode model proven
   * through a router: ProofRouterIT and RouterProofIT make it, and their harness checks every
   * request against the chart's RBAC on close.
   */
  private static final Map<String, String> USED_WHERE_THIS_SCENARIO_CANNOT_REACH =
      Map.of(
          "get core/services (cluster-wide)",
          "ProofRouterIT, RouterProofIT (cluster-wide install)",
          "get core/services in " + NS,
          "ProofRouterIT, RouterProofIT (namespaced install)");

  @Test
  void clusterWideInstallAllowsEveryRequestTheOperatorMakes() throws Exception {
    Set<String> used = replayAgainstTheChart("");
    // ModelDeployments are watched cluster-wide; pods only in the namespaces that hold one (issue
    // 18 §2), which the cluster-wide grant covers: the namespaces are not known when the chart is
    // installed.
    assertThat(used)
        .contains(
            "list core/pods in " + NS,
            "watch core/pods in " + NS,
            "list kvguard.io/modeldeployments (cluster-wide)",
            "watch kvguard.io/modeldeployments (cluster-wide)")
        .doesNotContain("list core/pods (cluster-wide)", "watch core/pods (cluster-wide)");
  }

  @Test
  void namespacedInstallAllowsEveryRequestTheOperatorMakesAndItStaysInItsNamespaces()
      throws Exception {
    Set<String> used = replayAgainstTheChart("watchNamespaces: [" + NS + "]");
    assertThat(used)
        .contains("list core/pods in " + NS, "watch kvguard.io/modeldeployments in " + NS)
        // Cluster-wide only the webhook's own configuration (cluster-scoped), by name, for its
        // caBundle.
        .filteredOn(a -> a.endsWith("(cluster-wide)"))
        .allMatch(
            a ->
                a.endsWith(
                    " admissionregistration.k8s.io/mutatingwebhookconfigurations name=kvguard-readiness-gate (cluster-wide)"));
  }

  /**
   * Runs the scenario with the chart's configuration; returns the distinct accesses the operator
   * needed.
   */
  private Set<String> replayAgainstTheChart(String values) throws Exception {
    assertThat(OperatorHarness.OPERATOR_NAMESPACE).isEqualTo(RenderedChart.NAMESPACE);
    RenderedChart chart = RenderedChart.render(values);
    RenderedRbac rbac =
        RenderedRbac.forServiceAccount(
            chart.all(), RenderedChart.NAMESPACE, RenderedRbac.OPERATOR_SERVICE_ACCOUNT);
    KvguardConfig config = KvguardConfig.fromEnvironment(environment(chart.one(Deployment.class)));

    List<Request> operatorRequests;
    try (OperatorHarness h = new OperatorHarness()) {
      FakeEngine engine = h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 262_144));
      h.pod("llm-0", Map.of("app", "llm"), engine);
      List<Request> own = new ArrayList<>();
      AtomicBoolean gateConflict = new AtomicBoolean();
      AtomicBoolean finalizerConflict = new AtomicBoolean();
      h.api.faults(
          request -> {
            if (TEST_AGENT.equals(request.getHeader("User-Agent"))) {
              synchronized (own) {
                own.add(new Request(request.getMethod(), request.getPath(), 0));
              }
              return null;
            }
            // One conflict on the first gate write and one on the finalizer's patch, as on a real
            // cluster whenever the kubelet or another writer moved first: their retries re-read the
            // object, so the scenario needs (and proves) get on pods and on ModelDeployments.
            String path = request.getPath();
            if (request.getMethod().equals("PATCH")
                && (path.startsWith("/api/v1/namespaces/" + NS + "/pods/llm-0/status")
                        && gateConflict.compareAndSet(false, true)
                    || path.split("\\?")[0].equals(
                            "/apis/kvguard.io/v1alpha1/namespaces/" + NS + "/modeldeployments/llm")
                        && finalizerConflict.compareAndSet(false, true))) {
              return new MockResponse()
                  .setResponseCode(409)
                  .setBody(EmbeddedApiServer.status(409, "Conflict", "injected by the test"));
            }
            return null;
          });
      try (KubernetesClient test =
          new KubernetesClientBuilder()
              .withConfig(
                  new ConfigBuilder(h.client.getConfiguration()).withUserAgent(TEST_AGENT).build())
              .build()) {
        h.api.clearRequests();
        h.start(config);

        test.resources(ModelDeployment.class)
            .inNamespace(NS)
            .resource(
                h.modelDeployment(
                    "llm", WINDOW, role("serve", Engine.SGLANG, Map.of("app", "llm"))))
            .create();
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> {
                  assertThat(gate(test, "llm-0"))
                      .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
                  assertThat(labelled(test, "llm-0")).isTrue();
                });

        // The operator restarts, then the engine container does: the new process announces the
        // pod's second verification in the Event its predecessor created (create answers 409, get
        // reads the count, patch).
        h.stopOperator();
        h.start(config);
        h.pods.restartEngine(NS, "llm-0");
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () ->
                    assertThat(test.v1().events().inNamespace(NS).list().getItems())
                        .singleElement()
                        .satisfies(e -> assertThat(e.getCount()).isEqualTo(2)));

        test.resources(ModelDeployment.class).inNamespace(NS).withName("llm").delete();
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> {
                  assertThat(gate(test, "llm-0"))
                      .hasValueSatisfying(
                          c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getReason()).isEqualTo("PolicyRemoved");
                          });
                  assertThat(
                          test.resources(ModelDeployment.class)
                              .inNamespace(NS)
                              .withName("llm")
                              .get())
                      .isNull();
                });
        h.stopOperator();
        // The webhook's certificates as the chart configures them: issued into the Secret at the
        // first start (the operator's webhook does this beside the reconciler, on its own thread),
        // the configuration's caBundle written, then renewed (update) once the serving certificate
        // falls due.
        test.resource(chart.one(MutatingWebhookConfiguration.class)).create();
        WebhookSettings chartWebhook =
            WebhookSettings.fromEnvironment(environment(chart.one(Deployment.class)));
        WebhookSettings webhook =
            new WebhookSettings(
                chartWebhook.enabled(),
                chartWebhook.port(),
                java.nio.file.Files.createTempDirectory("kvguard-rbac-webhook"),
                chartWebhook.certSecret(),
                chartWebhook.configuration(),
                chartWebhook.service());
        new SelfManagedCertificates(h.client, RenderedChart.NAMESPACE, webhook, Clock.systemUTC())
            .round();
        new SelfManagedCertificates(
                h.client,
                RenderedChart.NAMESPACE,
                webhook,
                Clock.offset(Clock.systemUTC(), Duration.ofDays(300)))
            .round();
      }
      synchronized (own) {
        operatorRequests = without(h.api.requests(), own);
      }
    }

    Set<String> used = new TreeSet<>();
    for (Request request : operatorRequests) {
      Access access = RenderedRbac.access(request.method(), request.path());
      if (!RenderedRbac.grantedToEveryAuthenticatedUser(access)) {
        used.add(access.toString());
      }
    }
    System.out.println(
        "accesses the operator used with values {" + values + "}:\n  " + String.join("\n  ", used));
    assertThat(rbac.denied(operatorRequests))
        .as("requests the chart's RBAC would refuse")
        .isEmpty();
    assertThat(rbac.unused(operatorRequests))
        .as("verbs the chart grants that no request of the operator used")
        .isSubsetOf(USED_WHERE_THIS_SCENARIO_CANNOT_REACH.keySet());
    // The scenario reached every kind of write the operator makes, so the check above covered them.
    assertThat(used)
        .contains(
            "patch core/pods/status name=llm-0 in " + NS,
            "patch core/pods name=llm-0 in " + NS,
            "get core/pods name=llm-0 in " + NS,
            "get kvguard.io/modeldeployments name=llm in " + NS,
            "create core/events in " + NS,
            "get coordination.k8s.io/leases name=kvguard-operator in " + RenderedChart.NAMESPACE,
            "create coordination.k8s.io/leases in " + RenderedChart.NAMESPACE,
            // The verdict key: created at the first start (the API server has none), read at the
            // restart.
            "create core/secrets in " + RenderedChart.NAMESPACE,
            "get core/secrets name=kvguard-verdict-key in " + RenderedChart.NAMESPACE,
            // The webhook's certificates (issue 18 §1): its Secret created, read and renewed; its
            // caBundle written.
            "get core/secrets name=kvguard-webhook-tls in " + RenderedChart.NAMESPACE,
            "update core/secrets name=kvguard-webhook-tls in " + RenderedChart.NAMESPACE,
            "get admissionregistration.k8s.io/mutatingwebhookconfigurations name=kvguard-readiness-gate (cluster-wide)",
            "patch admissionregistration.k8s.io/mutatingwebhookconfigurations name=kvguard-readiness-gate (cluster-wide)");
    assertThat(used)
        .anyMatch(
            a ->
                a.startsWith("patch kvguard.io/modeldeployments/status ")
                    || a.startsWith("update kvguard.io/modeldeployments/status "));
    assertThat(used)
        .anyMatch(
            a ->
                a.matches(
                    "(patch|update) kvguard.io/modeldeployments(/finalizers)? name=llm in .*"));
    return used;
  }

  /**
   * The operator's environment exactly as the chart's Deployment sets it (POD_NAME as the downward
   * API would).
   */
  private static Map<String, String> environment(Deployment deployment) {
    Map<String, String> env = new HashMap<>();
    for (EnvVar var :
        deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv()) {
      if (var.getValue() != null) {
        env.put(var.getName(), var.getValue());
      } else if ("metadata.name".equals(var.getValueFrom().getFieldRef().getFieldPath())) {
        env.put(var.getName(), "kvguard-5d8c7b9f4-x2x7q");
      }
    }
    return env;
  }

  /** All recorded requests minus the test's own (a multiset difference on method and path). */
  private static List<Request> without(List<Request> all, List<Request> own) {
    Map<String, Integer> remaining = new HashMap<>();
    own.forEach(r -> remaining.merge(r.method() + " " + r.path(), 1, Integer::sum));
    List<Request> rest = new ArrayList<>();
    for (Request request : all) {
      String key = request.method() + " " + request.path();
      Integer left = remaining.get(key);
      if (left != null && left > 0) {
        remaining.put(key, left - 1);
      } else {
        rest.add(request);
      }
    }
    return rest;
  }

  private static Optional<PodCondition> gate(KubernetesClient client, String pod) {
    Pod found = client.pods().inNamespace(NS).withName(pod).get();
    if (found == null || found.getStatus() == null || found.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return found.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  private static boolean labelled(KubernetesClient client, String pod) {
    Pod found = client.pods().inNamespace(NS).withName(pod).get();
    return found != null
        && "true".equals(found.getMetadata().getLabels().get(GateNames.VERIFIED_LABEL));
  }
}

package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The exact RBAC the chart grants, rule by rule. Least privilege: a rule added here must be one the
 * operator uses (RbacCoversOperatorRequestsIT replays its requests against these rules).
 */
class ChartRbacTest {
  private static final String SA = "kvguard";

  /** The rules kvguard needs wherever it watches, in the order the chart renders them. */
  private static final List<String> WATCH_RULES =
      List.of(
          "core pods verbs=[get, list, watch, patch]",
          "core pods/status verbs=[patch]",
          "core events verbs=[create, get, patch]",
          "kvguard.io modeldeployments verbs=[get, list, watch, patch]",
          "kvguard.io modeldeployments/status verbs=[patch]",
          "core services verbs=[get]");

  private static final List<String> LEADER_ELECTION_RULES =
      List.of(
          "coordination.k8s.io leases verbs=[create]",
          "coordination.k8s.io leases names=[kvguard-operator] verbs=[get, update, patch]");

  /**
   * The verdict key: create any Secret (no name in a create's URL), read only its own, in the
   * release namespace.
   */
  private static final List<String> VERDICT_KEY_RULES =
      List.of(
          "core secrets verbs=[create]", "core secrets names=[kvguard-verdict-key] verbs=[get]");

  private static final String VERDICT_KEY_ROLE = "kvguard-verdict-key";

  /**
   * The webhook's certificates, issued by the operator (webhook on, cert-manager off: the
   * defaults).
   */
  private static final String WEBHOOK_TLS_ROLE = "kvguard-webhook-tls";

  private static final List<String> WEBHOOK_TLS_RULES =
      List.of(
          "core secrets verbs=[create]",
          "core secrets names=[kvguard-webhook-tls] verbs=[get, update]");
  private static final String WEBHOOK_CA_ROLE = "kvguard-webhook-ca";
  private static final List<String> WEBHOOK_CA_RULES =
      List.of(
          "admissionregistration.k8s.io mutatingwebhookconfigurations names=[kvguard-readiness-gate] verbs=[get, patch]");

  static List<String> describe(List<PolicyRule> rules) {
    return rules.stream().map(ChartRbacTest::describe).toList();
  }

  static String describe(PolicyRule rule) {
    assertThat(rule.getNonResourceURLs()).as("no non-resource URLs").isNullOrEmpty();
    String groups =
        String.join(",", rule.getApiGroups().stream().map(g -> g.isEmpty() ? "core" : g).toList());
    String names =
        rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
            ? ""
            : " names=" + rule.getResourceNames();
    return groups
        + " "
        + String.join(",", rule.getResources())
        + names
        + " verbs="
        + rule.getVerbs();
  }

  @Test
  void clusterWideByDefault() {
    RenderedChart chart = RenderedChart.render("");
    ClusterRole role = chart.named(ClusterRole.class, SA);
    assertThat(describe(role.getRules())).containsExactlyElementsOf(WATCH_RULES);
    ClusterRoleBinding binding = chart.named(ClusterRoleBinding.class, SA);
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo(SA);
              assertThat(s.getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
            });
    assertLeaderElectionRole(chart);
    assertVerdictKeyRole(chart);
    assertWebhookCertificateRoles(chart);
    // Only the leader-election, verdict-key and webhook-certificate Roles are namespaced; the only
    // other ClusterRole is the webhook's caBundle one; nothing else is granted.
    assertThat(chart.all(Role.class)).hasSize(3);
    assertThat(chart.all(RoleBinding.class)).hasSize(3);
    assertThat(chart.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactlyInAnyOrder(SA, WEBHOOK_CA_ROLE);
  }

  @Test
  void listedNamespacesGetARoleEachAndNothingClusterWideButTheWebhooksCaBundle() {
    RenderedChart chart = RenderedChart.render("watchNamespaces: [inference, batch]");
    // The one cluster-wide grant: get and patch on the webhook's own MutatingWebhookConfiguration,
    // by name (a cluster-scoped object has no namespace to grant it in); none with
    // webhook.certManager.enabled.
    assertThat(chart.all(ClusterRole.class))
        .singleElement()
        .satisfies(
            role -> {
              assertThat(role.getMetadata().getName()).isEqualTo(WEBHOOK_CA_ROLE);
              assertThat(describe(role.getRules())).containsExactlyElementsOf(WEBHOOK_CA_RULES);
            });
    assertThat(chart.all(ClusterRoleBinding.class))
        .extracting(b -> b.getRoleRef().getName())
        .containsExactly(WEBHOOK_CA_ROLE);
    RenderedChart withCertManager =
        RenderedChart.render(
            "watchNamespaces: [inference, batch]\n"
                + "assumeApiVersions: [cert-manager.io/v1]\nwebhook: {certManager: {enabled: true}}");
    assertThat(withCertManager.all(ClusterRole.class)).isEmpty();
    assertThat(withCertManager.all(ClusterRoleBinding.class)).isEmpty();
    for (String namespace : List.of("inference", "batch")) {
      Role role = namespaced(chart.all(Role.class), namespace, SA);
      assertThat(describe(role.getRules())).containsExactlyElementsOf(WATCH_RULES);
      RoleBinding binding = namespaced(chart.all(RoleBinding.class), namespace, SA);
      assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
      assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
      assertThat(binding.getSubjects())
          .singleElement()
          .satisfies(
              s -> {
                assertThat(s.getName()).isEqualTo(SA);
                assertThat(s.getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
              });
    }
    assertLeaderElectionRole(chart);
    assertVerdictKeyRole(chart);
    assertWebhookCertificateRoles(chart);
    assertThat(chart.all(Role.class)).hasSize(5);
    RenderedRbac rbac = RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, SA);
    assertThat(
            rbac.allows(RenderedRbac.access("PATCH", "/api/v1/namespaces/inference/pods/p/status")))
        .isTrue();
    assertThat(
            rbac.allows(RenderedRbac.access("PATCH", "/api/v1/namespaces/default/pods/p/status")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", "/api/v1/pods?watch=true"))).isFalse();
  }

  private static void assertLeaderElectionRole(RenderedChart chart) {
    Role lease = chart.named(Role.class, "kvguard-leader-election");
    assertThat(lease.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(describe(lease.getRules())).containsExactlyElementsOf(LEADER_ELECTION_RULES);
    RoleBinding binding = chart.named(RoleBinding.class, "kvguard-leader-election");
    assertThat(binding.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(binding.getRoleRef().getName()).isEqualTo("kvguard-leader-election");
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getName()).isEqualTo(SA));
  }

  private static void assertVerdictKeyRole(RenderedChart chart) {
    Role key = chart.named(Role.class, VERDICT_KEY_ROLE);
    assertThat(key.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(describe(key.getRules())).containsExactlyElementsOf(VERDICT_KEY_RULES);
    RoleBinding binding = chart.named(RoleBinding.class, VERDICT_KEY_ROLE);
    assertThat(binding.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(binding.getRoleRef().getName()).isEqualTo(VERDICT_KEY_ROLE);
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getName()).isEqualTo(SA));
  }

  private static void assertWebhookCertificateRoles(RenderedChart chart) {
    Role tls = chart.named(Role.class, WEBHOOK_TLS_ROLE);
    assertThat(tls.getMetadata().getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(describe(tls.getRules())).containsExactlyElementsOf(WEBHOOK_TLS_RULES);
    assertThat(chart.named(RoleBinding.class, WEBHOOK_TLS_ROLE).getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getName()).isEqualTo(SA));
    assertThat(describe(chart.named(ClusterRole.class, WEBHOOK_CA_ROLE).getRules()))
        .containsExactlyElementsOf(WEBHOOK_CA_RULES);
    assertThat(chart.named(ClusterRoleBinding.class, WEBHOOK_CA_ROLE).getSubjects())
        .singleElement()
        .satisfies(s -> assertThat(s.getName()).isEqualTo(SA));
  }

  @Test
  void withCertManagerTheOperatorNeitherReadsNorWritesTheWebhooksSecretOrConfiguration() {
    RenderedChart chart =
        RenderedChart.render(
            "assumeApiVersions: [cert-manager.io/v1]\n"
                + "webhook: {certManager: {enabled: true}}");
    assertThat(chart.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .doesNotContain(WEBHOOK_TLS_ROLE);
    assertThat(chart.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly(SA);
    RenderedChart off = RenderedChart.render("webhook: {enabled: false}");
    assertThat(off.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .doesNotContain(WEBHOOK_TLS_ROLE);
    assertThat(off.all(ClusterRole.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactly(SA);
  }

  @Test
  void theVerdictKeyIsTheOnlySecretTheOperatorMayReadAndOnlyInItsOwnNamespace() {
    RenderedChart chart = RenderedChart.render("");
    assertThat(
            ChartDefaultsTest.env(
                chart
                    .one(io.fabric8.kubernetes.api.model.apps.Deployment.class)
                    .getSpec()
                    .getTemplate()
                    .getSpec()
                    .getContainers()
                    .get(0)))
        .containsEntry("KVGUARD_VERDICT_KEY_SECRET", "kvguard-verdict-key");
    RenderedRbac rbac = RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, SA);
    String own = "/api/v1/namespaces/" + RenderedChart.NAMESPACE + "/secrets";
    assertThat(rbac.allows(RenderedRbac.access("GET", own + "/kvguard-verdict-key"))).isTrue();
    assertThat(rbac.allows(RenderedRbac.access("POST", own))).isTrue();
    assertThat(rbac.allows(RenderedRbac.access("GET", own + "/other"))).isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", own))).isFalse();
    assertThat(rbac.allows(RenderedRbac.access("PUT", own + "/kvguard-verdict-key"))).isFalse();
    assertThat(rbac.allows(RenderedRbac.access("DELETE", own + "/kvguard-verdict-key"))).isFalse();
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "GET", "/api/v1/namespaces/inference/secrets/kvguard-verdict-key")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("POST", "/api/v1/namespaces/inference/secrets")))
        .isFalse();
  }

  @Test
  void withoutLeaderElectionThereIsNoLeaseAccess() {
    RenderedChart chart = RenderedChart.render("replicaCount: 1\nleaderElection: {enabled: false}");
    assertThat(chart.all(Role.class))
        .extracting(r -> r.getMetadata().getName())
        .containsExactlyInAnyOrder(VERDICT_KEY_ROLE, WEBHOOK_TLS_ROLE);
    assertThat(
            ChartDefaultsTest.env(
                chart
                    .one(io.fabric8.kubernetes.api.model.apps.Deployment.class)
                    .getSpec()
                    .getTemplate()
                    .getSpec()
                    .getContainers()
                    .get(0)))
        .containsEntry("KVGUARD_LEADER_ELECTION", "false");
  }

  @Test
  void noRuleMentionsSecretsOrConfigMapsUnlessProbeCredentialsOrProbeTlsAreOn() {
    for (String values :
        List.of(
            "",
            "watchNamespaces: [inference]",
            "probeTls: {enabled: false, secretNames: [engine-ca], configMapNames: [engine-ca]}")) {
      RenderedChart chart = RenderedChart.render(values);
      // Besides the verdict key's and the webhook certificate's own Roles (their rules are exact).
      assertVerdictKeyRole(chart);
      assertWebhookCertificateRoles(chart);
      assertThat(allRulesBut(chart, VERDICT_KEY_ROLE, WEBHOOK_TLS_ROLE))
          .noneMatch(
              r ->
                  r.getResources().stream()
                      .anyMatch(
                          x ->
                              x.startsWith("secrets")
                                  || x.startsWith("configmaps")
                                  || x.equals("*")));
      assertThat(allRules(chart))
          .noneMatch(r -> r.getVerbs().contains("*") || r.getApiGroups().contains("*"));
    }
  }

  @Test
  void probeCredentialsAllowGetAndWatchOnTheNamedSecretsOnly() {
    RenderedChart chart =
        RenderedChart.render(
            "probeCredentials: {enabled: true, secretNames: [engine-token, router-token]}");
    assertThat(describe(chart.named(ClusterRole.class, SA).getRules()))
        .containsExactlyElementsOf(
            Stream.concat(
                    WATCH_RULES.stream(),
                    Stream.of("core secrets names=[engine-token, router-token] verbs=[get, watch]"))
                .toList());
    RenderedRbac rbac = RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, SA);
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/api/v1/namespaces/inference/secrets/engine-token")))
        .isTrue();
    assertThat(
            rbac.allows(RenderedRbac.access("GET", "/api/v1/namespaces/inference/secrets/other")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", "/api/v1/namespaces/inference/secrets")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", "/api/v1/secrets?watch=true"))).isFalse();
    // Issue 20: a token is dropped the moment its Secret changes, through a watch of that one
    // Secret by name.
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "GET",
                    "/api/v1/namespaces/inference/secrets?fieldSelector=metadata.name%3Dengine-token&watch=true")))
        .isTrue();
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "GET",
                    "/api/v1/namespaces/inference/secrets?fieldSelector=metadata.name%3Dother&watch=true")))
        .isFalse();

    RenderedChart namespaced =
        RenderedChart.render(
            "watchNamespaces: [inference]\nprobeCredentials: {enabled: true, secretNames: [engine-token]}");
    assertThat(describe(namespaced(namespaced.all(Role.class), "inference", SA).getRules()))
        .endsWith("core secrets names=[engine-token] verbs=[get, watch]");
  }

  @Test
  void probeTlsAllowsGetOnTheNamedCaBundlesOnly() {
    RenderedChart chart =
        RenderedChart.render(
            "probeTls: {enabled: true, secretNames: [engine-ca], configMapNames: [engine-ca-bundle, root-ca]}");
    assertThat(describe(chart.named(ClusterRole.class, SA).getRules()))
        .containsExactlyElementsOf(
            Stream.concat(
                    WATCH_RULES.stream(),
                    Stream.of(
                        "core secrets names=[engine-ca] verbs=[get]",
                        "core configmaps names=[engine-ca-bundle, root-ca] verbs=[get]"))
                .toList());
    RenderedRbac rbac = RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, SA);
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/api/v1/namespaces/inference/configmaps/root-ca")))
        .isTrue();
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/api/v1/namespaces/inference/configmaps/other")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", "/api/v1/namespaces/inference/configmaps")))
        .isFalse();
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/api/v1/namespaces/inference/secrets/engine-ca")))
        .isTrue();
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/api/v1/namespaces/inference/secrets/engine-token")))
        .isFalse();

    RenderedChart onlyConfigMaps =
        RenderedChart.render(
            "watchNamespaces: [inference]\n"
                + "probeTls: {enabled: true, configMapNames: [engine-ca-bundle]}");
    assertThat(describe(namespaced(onlyConfigMaps.all(Role.class), "inference", SA).getRules()))
        .endsWith("core configmaps names=[engine-ca-bundle] verbs=[get]")
        .noneMatch(rule -> rule.contains("secrets"));
  }

  @Test
  void turningRbacOffRendersNoRolesButKeepsTheServiceAccount() {
    RenderedChart chart = RenderedChart.render("rbac: {create: false}");
    assertThat(chart.kinds())
        .doesNotContain("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
        .contains("ServiceAccount");
    // Whoever grants the operator its verbs, the write policies still confine what it does with
    // them.
    assertThat(chart.kind("ValidatingAdmissionPolicy"))
        .extracting(o -> o.getMetadata().getName())
        .containsExactlyInAnyOrder("kvguard-pod-writes", "kvguard-webhook-ca-writes");
  }

  @Test
  void theCrdUpgradeHookMayOnlyTouchTheOneCrd() {
    RenderedChart chart = RenderedChart.renderWithHooks("");
    ClusterRole hook = chart.named(ClusterRole.class, "kvguard-crd-upgrade");
    assertThat(describe(hook.getRules()))
        .containsExactly(
            "apiextensions.k8s.io customresourcedefinitions names=[modeldeployments.kvguard.io] verbs=[get, create, patch]");
    ClusterRoleBinding binding = chart.named(ClusterRoleBinding.class, "kvguard-crd-upgrade");
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getName()).isEqualTo("kvguard-crd-upgrade");
              assertThat(s.getNamespace()).isEqualTo(RenderedChart.NAMESPACE);
            });
    RenderedRbac rbac =
        RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, "kvguard-crd-upgrade");
    String crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/";
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "PATCH",
                    crd + "modeldeployments.kvguard.io?fieldManager=kvguard-chart&force=true")))
        .isTrue();
    assertThat(rbac.allows(RenderedRbac.access("GET", crd + "modeldeployments.kvguard.io")))
        .isTrue();
    assertThat(rbac.allows(RenderedRbac.access("PATCH", crd + "certificates.cert-manager.io")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("DELETE", crd + "modeldeployments.kvguard.io")))
        .isFalse();
    // Server-side apply never sends a PUT.
    assertThat(rbac.allows(RenderedRbac.access("PUT", crd + "modeldeployments.kvguard.io")))
        .isFalse();
    assertThat(rbac.allows(RenderedRbac.access("GET", "/api/v1/namespaces/inference/pods")))
        .isFalse();
    // The hook's account is not the operator's, and the operator gets nothing on CRDs.
    RenderedRbac operator =
        RenderedRbac.forServiceAccount(chart.all(), RenderedChart.NAMESPACE, SA);
    assertThat(operator.allows(RenderedRbac.access("GET", crd + "modeldeployments.kvguard.io")))
        .isFalse();
  }

  private static List<PolicyRule> allRulesBut(RenderedChart chart, String... roleNames) {
    List<String> excluded = List.of(roleNames);
    return Stream.concat(
            chart.all(ClusterRole.class).stream().flatMap(r -> r.getRules().stream()),
            chart.all(Role.class).stream()
                .filter(r -> !excluded.contains(r.getMetadata().getName()))
                .flatMap(r -> r.getRules().stream()))
        .toList();
  }

  private static List<PolicyRule> allRules(RenderedChart chart) {
    return Stream.concat(
            chart.all(ClusterRole.class).stream().flatMap(r -> r.getRules().stream()),
            chart.all(Role.class).stream().flatMap(r -> r.getRules().stream()))
        .toList();
  }

  private static <T extends HasMetadata> T namespaced(
      List<T> objects, String namespace, String name) {
    return objects.stream()
        .filter(
            o ->
                namespace.equals(o.getMetadata().getNamespace())
                    && name.equals(o.getMetadata().getName()))
        .findFirst()
        .orElseThrow(
            () ->
                new AssertionError(
                    "nothing named "
                        + name
                        + " in "
                        + namespace
                        + " "
                        + objects.stream()
                            .map(
                                o ->
                                    Map.entry(
                                        o.getMetadata().getNamespace(), o.getMetadata().getName()))
                            .toList()));
  }
}

package io.kvguard.helm;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.kvguard.helm.RenderedRbac.Access;
import io.kvguard.testkit.EmbeddedApiServer.Request;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The request-to-RBAC mapping and rule matching follow Kubernetes' authorizer, or the RBAC check
 * means nothing.
 */
class RenderedRbacTest {

  @ParameterizedTest(name = "{0} {1} -> {3} {2}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "GET    | /api/v1/namespaces/x/pods/y                                       | pods                          | get              | x | y",
        "GET    | /api/v1/namespaces/x/pods                                         | pods                          | list             | x | -",
        "GET    | /api/v1/pods?resourceVersion=0                                    | pods                          | list             | - | -",
        "GET    | /api/v1/pods?allowWatchBookmarks=true&resourceVersion=5&watch=true | pods                          | watch            | - | -",
        "GET    | /api/v1/watch/namespaces/x/pods                                   | pods                          | watch            | x | -",
        "PATCH  | /api/v1/namespaces/x/pods/y/status                                | pods/status                   | patch            | x | y",
        "PATCH  | /api/v1/namespaces/x/pods/y                                       | pods                          | patch            | x | y",
        "POST   | /api/v1/namespaces/x/events                                       | events                        | create           | x | -",
        "PUT    | /apis/kvguard.io/v1alpha1/namespaces/x/modeldeployments/m/finalizers | modeldeployments/finalizers | update           | x | m",
        "PUT    | /apis/kvguard.io/v1alpha1/namespaces/x/modeldeployments/m/status  | modeldeployments/status       | update           | x | m",
        "GET    | /apis/kvguard.io/v1alpha1/modeldeployments?watch=1                | modeldeployments              | watch            | - | -",
        "DELETE | /apis/kvguard.io/v1alpha1/namespaces/x/modeldeployments/m         | modeldeployments              | delete           | x | m",
        "DELETE | /apis/kvguard.io/v1alpha1/namespaces/x/modeldeployments           | modeldeployments              | deletecollection | x | -",
        "GET    | /apis/coordination.k8s.io/v1/namespaces/s/leases/kvguard-operator | leases                        | get              | s | kvguard-operator",
        "GET    | /api/v1/namespaces/s/leases?fieldSelector=metadata.name%3Dl&watch=true | leases                   | watch            | s | l",
        "GET    | /api/v1/namespaces/x                                              | namespaces                    | get              | x | x",
        "PUT    | /api/v1/namespaces/x/finalize                                     | namespaces/finalize           | update           | x | x",
        "GET    | /apis/apiextensions.k8s.io/v1/customresourcedefinitions/c.io      | customresourcedefinitions     | get              | - | c.io",
      })
  void mapsARequestToWhatTheAuthorizerChecks(
      String method, String path, String resource, String verb, String namespace, String name) {
    Access access = RenderedRbac.access(method, path);
    assertThat(access.isResource()).isTrue();
    assertThat(access.combinedResource()).isEqualTo(resource);
    assertThat(access.verb()).isEqualTo(verb);
    assertThat(access.namespace()).isEqualTo(namespace);
    assertThat(access.name()).isEqualTo(name);
  }

  @Test
  void readsTheApiGroupFromThePath() {
    assertThat(RenderedRbac.access("GET", "/api/v1/namespaces/x/pods").apiGroup()).isEmpty();
    assertThat(RenderedRbac.access("GET", "/apis/kvguard.io/v1alpha1/modeldeployments").apiGroup())
        .isEqualTo("kvguard.io");
    assertThat(
            RenderedRbac.access("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews")
                .apiGroup())
        .isEqualTo("authorization.k8s.io");
  }

  @Test
  void discoveryPathsAreNonResourceRequests() {
    for (String path :
        List.of(
            "/version", "/api", "/apis", "/apis/kvguard.io/v1alpha1", "/api/v1", "/openapi/v2")) {
      Access access = RenderedRbac.access("GET", path);
      assertThat(access.isResource()).as(path).isFalse();
      assertThat(access.nonResourcePath()).isEqualTo(path);
    }
  }

  @Test
  void matchesRulesAsTheRbacAuthorizerDoes() {
    PolicyRule pods = rule("", "pods", List.of(), "get", "list");
    PolicyRule status = rule("", "pods/status", List.of(), "patch");
    PolicyRule lease =
        rule("coordination.k8s.io", "leases", List.of("kvguard-operator"), "get", "update");
    RenderedRbac rbac = RenderedRbac.ofClusterRoleRules(List.of(pods, status, lease));

    assertThat(rbac.allows("", "pods", null, "get")).isTrue();
    assertThat(rbac.allows("", "pods", null, "watch")).isFalse();
    assertThat(rbac.allows("", "pods", "status", "patch")).isTrue();
    // A rule on pods says nothing about its subresources, and the reverse.
    assertThat(rbac.allows("", "pods", "status", "get")).isFalse();
    assertThat(rbac.allows("", "pods", null, "patch")).isFalse();
    // The wrong API group is not the same resource.
    assertThat(rbac.allows("apps", "pods", null, "get")).isFalse();
    // resourceNames limit a rule to those names; the 4-argument form asks about every object.
    assertThat(rbac.allows("coordination.k8s.io", "leases", null, "get")).isFalse();
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/kvguard-operator")))
        .isTrue();
    assertThat(
            rbac.allows(
                RenderedRbac.access(
                    "GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/other")))
        .isFalse();
    // A named rule never matches a collection request.
    assertThat(
            rbac.allows(
                RenderedRbac.access("GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases")))
        .isFalse();
    // Non-resource requests need nonResourceURLs rules, which the chart never grants.
    assertThat(rbac.allows(RenderedRbac.access("GET", "/version"))).isFalse();
  }

  @Test
  void wildcardsMatchEverything() {
    RenderedRbac rbac = RenderedRbac.ofClusterRoleRules(List.of(rule("*", "*", List.of(), "*")));
    assertThat(rbac.allows("anything.io", "widgets", "scale", "deletecollection")).isTrue();
    RenderedRbac scale =
        RenderedRbac.ofClusterRoleRules(List.of(rule("apps", "*/scale", List.of(), "update")));
    assertThat(scale.allows("apps", "deployments", "scale", "update")).isTrue();
    assertThat(scale.allows("apps", "deployments", null, "update")).isFalse();
  }

  @Test
  void listsTheRecordedRequestsTheChartWouldRefuse() {
    RenderedRbac rbac = RenderedRbac.forChart("");
    List<String> denied =
        rbac.denied(
            List.of(
                new Request("PATCH", "/api/v1/namespaces/inference/pods/p/status", 200),
                new Request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", 201),
                new Request("GET", "/version", 200),
                new Request("GET", "/api/v1/namespaces/inference/secrets/engine-token", 200),
                new Request("DELETE", "/api/v1/namespaces/inference/pods/p", 200),
                new Request(
                    "PUT",
                    "/apis/coordination.k8s.io/v1/namespaces/inference/leases/kvguard-operator",
                    200)));
    assertThat(denied)
        .containsExactly(
            "get core/secrets name=engine-token in inference  <-  GET /api/v1/namespaces/inference/secrets/engine-token",
            "delete core/pods name=p in inference  <-  DELETE /api/v1/namespaces/inference/pods/p",
            "update coordination.k8s.io/leases name=kvguard-operator in inference  <-  "
                + "PUT /apis/coordination.k8s.io/v1/namespaces/inference/leases/kvguard-operator");
  }

  @Test
  void listsTheGrantedVerbsNoRecordedRequestUsed() {
    PolicyRule pods = rule("", "pods", List.of(), "get", "patch", "update");
    PolicyRule lease =
        rule("coordination.k8s.io", "leases", List.of("kvguard-operator"), "get", "update");
    RenderedRbac rbac = RenderedRbac.ofClusterRoleRules(List.of(pods, lease));
    List<String> unused =
        rbac.unused(
            List.of(
                new Request("PATCH", "/api/v1/namespaces/inference/pods/p", 200),
                // A request on another name does not use a grant limited to kvguard-operator.
                new Request("GET", "/apis/coordination.k8s.io/v1/namespaces/a/leases/other", 200),
                new Request(
                    "PUT",
                    "/apis/coordination.k8s.io/v1/namespaces/a/leases/kvguard-operator",
                    200),
                // A subresource request does not use a grant on the resource.
                new Request("GET", "/api/v1/namespaces/inference/pods/p/status", 200)));
    assertThat(unused)
        .containsExactly(
            "get core/pods (cluster-wide)",
            "update core/pods (cluster-wide)",
            "get coordination.k8s.io/leases names=[kvguard-operator] (cluster-wide)");
  }

  private static PolicyRule rule(
      String group, String resource, List<String> names, String... verbs) {
    return new PolicyRuleBuilder()
        .withApiGroups(group)
        .withResources(resource)
        .withResourceNames(names)
        .withVerbs(verbs)
        .build();
  }
}

package io.kvguard.helm;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.kvguard.testkit.EmbeddedApiServer;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What the chart's RBAC lets one ServiceAccount do, evaluated the way the Kubernetes RBAC
 * authorizer does (API group, resource or resource/subresource, verb, resourceNames;
 * ClusterRoleBindings grant in every namespace, RoleBindings in theirs). The mock API server
 * enforces no RBAC, so tests replay the operator's recorded requests through {@link #access} and
 * {@link #allows(Access)} instead.
 */
public final class RenderedRbac {

  /**
   * One request as the authorizer sees it. {@code namespace} is null for cluster-scoped objects and
   * for lists or watches across all namespaces; {@code name} is null for collections; {@code
   * nonResourcePath} is set (and the rest null) for paths such as /version.
   */
  public record Access(
      String apiGroup,
      String resource,
      String subresource,
      String verb,
      String namespace,
      String name,
      String nonResourcePath) {

    public boolean isResource() {
      return nonResourcePath == null;
    }

    /** "resource" or "resource/subresource", as RBAC rules spell it. */
    public String combinedResource() {
      return subresource == null ? resource : resource + "/" + subresource;
    }

    @Override
    public String toString() {
      if (!isResource()) {
        return verb + " " + nonResourcePath;
      }
      return verb
          + " "
          + (apiGroup.isEmpty() ? "core" : apiGroup)
          + "/"
          + combinedResource()
          + (name == null ? "" : " name=" + name)
          + (namespace == null ? " (cluster-wide)" : " in " + namespace);
    }
  }

  /**
   * Namespaces whose subresources are part of the namespace object itself (as in Kubernetes'
   * RequestInfo).
   */
  private static final Set<String> NAMESPACE_SUBRESOURCES = Set.of("status", "finalize");

  private final List<PolicyRule> clusterRules;
  private final Map<String, List<PolicyRule>> namespaceRules;

  private RenderedRbac(
      List<PolicyRule> clusterRules, Map<String, List<PolicyRule>> namespaceRules) {
    this.clusterRules = List.copyOf(clusterRules);
    this.namespaceRules = Map.copyOf(namespaceRules);
  }

  /** The operator's ServiceAccount as the chart names it when installed as release "kvguard". */
  public static final String OPERATOR_SERVICE_ACCOUNT = "kvguard";

  /**
   * What the chart, rendered with {@code valuesYaml} (empty for the defaults) into {@link
   * RenderedChart#NAMESPACE}, grants the operator's ServiceAccount.
   */
  private static final java.util.Map<String, RenderedRbac> RENDERED =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** {@link #forChart} rendered once per distinct values per JVM (rendering takes a second). */
  public static RenderedRbac cached(String valuesYaml) {
    return RENDERED.computeIfAbsent(valuesYaml, RenderedRbac::forChart);
  }

  public static RenderedRbac forChart(String valuesYaml) {
    return forServiceAccount(
        RenderedChart.render(valuesYaml).all(), RenderedChart.NAMESPACE, OPERATOR_SERVICE_ACCOUNT);
  }

  /**
   * The requests this RBAC would refuse, each as "access <- METHOD path". Requests Kubernetes
   * grants every authenticated user ({@link #grantedToEveryAuthenticatedUser}) are not counted.
   * Pass only the operator's own requests: a test's setup (namespaces, the CRD, pods) is not the
   * operator's business.
   */
  public List<String> denied(List<EmbeddedApiServer.Request> requests) {
    List<String> denied = new ArrayList<>();
    for (EmbeddedApiServer.Request request : requests) {
      Access access = access(request.method(), request.path());
      if (!grantedToEveryAuthenticatedUser(access) && !allows(access)) {
        denied.add(access + "  <-  " + request.method() + " " + request.path());
      }
    }
    return denied;
  }

  /**
   * Every verb the rules grant that none of {@code requests} used, one entry per group, resource,
   * verb and resourceNames, as "verb group/resource[ names=[..]] in namespace" or "...
   * (cluster-wide)". A request uses a grant when that grant alone would allow it. Least privilege:
   * a granted verb no request needs is one a compromised operator could use and the operator itself
   * never does.
   */
  public List<String> unused(List<EmbeddedApiServer.Request> requests) {
    List<Access> accesses =
        requests.stream()
            .map(r -> access(r.method(), r.path()))
            .filter(Access::isResource)
            .toList();
    List<String> unused = new ArrayList<>();
    collectUnused(clusterRules, null, accesses, unused);
    namespaceRules.forEach((namespace, rules) -> collectUnused(rules, namespace, accesses, unused));
    return unused;
  }

  private static void collectUnused(
      List<PolicyRule> rules, String namespace, List<Access> accesses, List<String> unused) {
    for (PolicyRule rule : rules) {
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            PolicyRule grant =
                new io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder()
                    .withApiGroups(group)
                    .withResources(resource)
                    .withVerbs(verb)
                    .withResourceNames(rule.getResourceNames())
                    .build();
            boolean used =
                accesses.stream()
                    .anyMatch(
                        a ->
                            (namespace == null || namespace.equals(a.namespace()))
                                && matches(grant, a, true));
            if (!used) {
              String names =
                  rule.getResourceNames() == null || rule.getResourceNames().isEmpty()
                      ? ""
                      : " names=" + rule.getResourceNames();
              unused.add(
                  verb
                      + " "
                      + (group.isEmpty() ? "core" : group)
                      + "/"
                      + resource
                      + names
                      + (namespace == null ? " (cluster-wide)" : " in " + namespace));
            }
          }
        }
      }
    }
  }

  /**
   * Kubernetes' default ClusterRoles grant these to every authenticated user: system:basic-user the
   * self reviews (JOSDK asks a SelfSubjectRulesReview before it elects a leader), system:discovery
   * the discovery paths.
   */
  public static boolean grantedToEveryAuthenticatedUser(Access access) {
    if (!access.isResource()) {
      String path = access.nonResourcePath();
      return access.verb().equals("get")
          && (path.equals("/api")
              || path.startsWith("/api/")
              || path.equals("/apis")
              || path.startsWith("/apis/")
              || path.equals("/version"));
    }
    return access.apiGroup().equals("authorization.k8s.io")
        && access.verb().equals("create")
        && access.name() == null
        && Set.of("selfsubjectrulesreviews", "selfsubjectaccessreviews")
            .contains(access.combinedResource());
  }

  /**
   * Rules that hold in every namespace and for cluster-scoped objects (a ClusterRole bound
   * cluster-wide).
   */
  public static RenderedRbac ofClusterRoleRules(List<PolicyRule> rules) {
    return new RenderedRbac(rules, Map.of());
  }

  /** Everything the rendered bindings grant to {@code serviceAccount} in {@code saNamespace}. */
  public static RenderedRbac forServiceAccount(
      List<HasMetadata> rendered, String saNamespace, String serviceAccount) {
    Map<String, ClusterRole> clusterRoles = new HashMap<>();
    Map<String, Role> roles = new HashMap<>();
    for (HasMetadata object : rendered) {
      if (object instanceof ClusterRole clusterRole) {
        clusterRoles.put(clusterRole.getMetadata().getName(), clusterRole);
      } else if (object instanceof Role role) {
        roles.put(role.getMetadata().getNamespace() + "/" + role.getMetadata().getName(), role);
      }
    }
    List<PolicyRule> cluster = new ArrayList<>();
    Map<String, List<PolicyRule>> namespaced = new HashMap<>();
    for (HasMetadata object : rendered) {
      if (object instanceof ClusterRoleBinding binding
          && bindsTo(binding.getSubjects(), saNamespace, serviceAccount)) {
        cluster.addAll(clusterRole(clusterRoles, binding.getRoleRef()).getRules());
      } else if (object instanceof RoleBinding binding
          && bindsTo(binding.getSubjects(), saNamespace, serviceAccount)) {
        String namespace = binding.getMetadata().getNamespace();
        RoleRef ref = binding.getRoleRef();
        List<PolicyRule> rules =
            "ClusterRole".equals(ref.getKind())
                ? clusterRole(clusterRoles, ref).getRules()
                : role(roles, namespace, ref).getRules();
        namespaced.computeIfAbsent(namespace, ns -> new ArrayList<>()).addAll(rules);
      }
    }
    return new RenderedRbac(cluster, namespaced);
  }

  private static boolean bindsTo(List<Subject> subjects, String namespace, String name) {
    return subjects != null
        && subjects.stream()
            .anyMatch(
                s ->
                    "ServiceAccount".equals(s.getKind())
                        && name.equals(s.getName())
                        && namespace.equals(s.getNamespace()));
  }

  private static ClusterRole clusterRole(Map<String, ClusterRole> clusterRoles, RoleRef ref) {
    ClusterRole role = clusterRoles.get(ref.getName());
    if (role == null) {
      throw new AssertionError(
          "a binding refers to ClusterRole " + ref.getName() + ", which the chart does not render");
    }
    return role;
  }

  private static Role role(Map<String, Role> roles, String namespace, RoleRef ref) {
    Role role = roles.get(namespace + "/" + ref.getName());
    if (role == null) {
      throw new AssertionError(
          "a RoleBinding in "
              + namespace
              + " refers to Role "
              + ref.getName()
              + ", which the chart does not render in that namespace");
    }
    return role;
  }

  /**
   * Whether the cluster-wide rules allow the verb on every object of the resource (no resourceNames
   * limit).
   */
  public boolean allows(String apiGroup, String resource, String subresource, String verb) {
    return matchesAny(
        clusterRules, new Access(apiGroup, resource, subresource, verb, null, null, null), false);
  }

  /** Whether the RBAC authorizer would allow this request. */
  public boolean allows(Access access) {
    if (!access.isResource()) {
      return false;
    }
    if (matchesAny(clusterRules, access, true)) {
      return true;
    }
    return access.namespace() != null
        && matchesAny(namespaceRules.getOrDefault(access.namespace(), List.of()), access, true);
  }

  /** Namespaces where some Role or RoleBinding grants anything. */
  public Set<String> namespaces() {
    return namespaceRules.keySet();
  }

  private static boolean matchesAny(List<PolicyRule> rules, Access access, boolean useName) {
    return rules.stream().anyMatch(rule -> matches(rule, access, useName));
  }

  private static boolean matches(PolicyRule rule, Access access, boolean useName) {
    if (!anyOf(rule.getApiGroups(), access.apiGroup()) || !anyOf(rule.getVerbs(), access.verb())) {
      return false;
    }
    boolean resource =
        rule.getResources() != null
            && rule.getResources().stream()
                .anyMatch(
                    r ->
                        r.equals("*")
                            || r.equals(access.combinedResource())
                            || (access.subresource() != null
                                && r.equals("*/" + access.subresource())));
    if (!resource) {
      return false;
    }
    List<String> names = rule.getResourceNames();
    if (names == null || names.isEmpty()) {
      return true;
    }
    return useName && access.name() != null && names.contains(access.name());
  }

  private static boolean anyOf(List<String> values, String wanted) {
    return values != null && (values.contains("*") || values.contains(wanted));
  }

  /**
   * Maps a request (method and path with query, as the API server received it) to what RBAC checks,
   * following Kubernetes' RequestInfoFactory: GET is get, list or watch ({@code ?watch=true}, or a
   * {@code /watch/} path); POST create; PUT update; PATCH patch; DELETE delete or deletecollection.
   * A watch or list limited by {@code fieldSelector=metadata.name=x} is authorized against the name
   * x.
   */
  public static Access access(String method, String pathAndQuery) {
    Objects.requireNonNull(method, "method");
    int q = pathAndQuery.indexOf('?');
    String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
    Map<String, String> query = query(q < 0 ? "" : pathAndQuery.substring(q + 1));
    List<String> parts =
        new ArrayList<>(Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toList());
    String verb = method.toUpperCase(java.util.Locale.ROOT);
    String apiGroup;
    if (parts.size() >= 2 && parts.get(0).equals("api")) {
      apiGroup = "";
      parts = parts.subList(2, parts.size());
    } else if (parts.size() >= 3 && parts.get(0).equals("apis")) {
      apiGroup = parts.get(1);
      parts = parts.subList(3, parts.size());
    } else {
      return new Access(null, null, null, nonResourceVerb(verb), null, null, path);
    }
    if (parts.isEmpty()) {
      return new Access(null, null, null, nonResourceVerb(verb), null, null, path);
    }
    boolean watchPath = false;
    if (parts.get(0).equals("watch")) {
      watchPath = true;
      parts = parts.subList(1, parts.size());
    }
    String namespace = null;
    if (parts.get(0).equals("namespaces") && parts.size() > 1) {
      namespace = parts.get(1);
      if (parts.size() > 2 && !NAMESPACE_SUBRESOURCES.contains(parts.get(2))) {
        parts = parts.subList(2, parts.size());
      }
    }
    String resource = parts.get(0);
    String name = parts.size() > 1 ? parts.get(1) : null;
    String subresource = parts.size() > 2 ? parts.get(2) : null;
    if ("namespaces".equals(resource)) {
      namespace = name;
    }
    String selectedName = fieldSelectedName(query.get("fieldSelector"));
    String rbacVerb =
        switch (verb) {
          case "GET", "HEAD" -> {
            if (watchPath || "true".equals(query.get("watch")) || "1".equals(query.get("watch"))) {
              yield "watch";
            }
            yield name == null ? "list" : "get";
          }
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> name == null ? "deletecollection" : "delete";
          default -> throw new IllegalArgumentException("no RBAC verb for HTTP method " + method);
        };
    if (name == null
        && selectedName != null
        && (rbacVerb.equals("list") || rbacVerb.equals("watch"))) {
      name = selectedName;
    }
    return new Access(apiGroup, resource, subresource, rbacVerb, namespace, name, null);
  }

  private static String nonResourceVerb(String method) {
    return switch (method) {
      case "GET", "HEAD" -> "get";
      case "POST" -> "post";
      case "PUT" -> "put";
      case "PATCH" -> "patch";
      case "DELETE" -> "delete";
      default -> method.toLowerCase(java.util.Locale.ROOT);
    };
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> values = new HashMap<>();
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value =
          eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      values.put(key, value);
    }
    return values;
  }

  /**
   * {@code metadata.name=x} (alone, or among other terms) names the one object a list or watch may
   * see.
   */
  private static String fieldSelectedName(String selector) {
    if (selector == null) {
      return null;
    }
    for (String term : selector.split(",")) {
      String t = term.strip();
      if (t.startsWith("metadata.name=") && !t.startsWith("metadata.name!=")) {
        return t.substring("metadata.name=".length()).replaceFirst("^=", "");
      }
    }
    return null;
  }
}

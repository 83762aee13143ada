package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.gate.GateNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The indexes answer exactly what a scan with the full selector would: which pods a role selects,
 * and which policies may concern a pod. Run over an in-memory cache with the indexers the operator
 * registers.
 */
class SelectionIndexTest {
  private final MemoryCache<Pod> pods = new MemoryCache<>();
  private final MemoryCache<ModelDeployment> policies = new MemoryCache<>();

  /**
   * The pods as the reconciler reads them (PodCache: per namespace; here one cache holds every
   * namespace).
   */
  private final SelectionIndex.Pods podView =
      new SelectionIndex.Pods() {
        @Override
        public List<Pod> byIndex(String namespace, String index, String key) {
          return pods.byIndex(index, key);
        }

        @Override
        public Stream<Pod> list(String namespace) {
          return pods.list(namespace);
        }
      };

  SelectionIndexTest() {
    pods.addIndexers(SelectionIndex.podIndexers());
    SelectionIndex.register(policies);
  }

  private Pod pod(String namespace, String name, Map<String, String> labels) {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace(namespace)
            .withName(name)
            .withLabels(labels)
            .endMetadata()
            .build();
    pods.put(pod);
    return pod;
  }

  private static LabelSelector matchLabels(Map<String, String> labels) {
    return new LabelSelectorBuilder().withMatchLabels(labels).build();
  }

  private static List<String> names(List<? extends HasMetadata> resources) {
    return resources.stream().map(r -> r.getMetadata().getName()).toList();
  }

  private ModelDeployment policy(String namespace, String name, LabelSelector... selectors) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setNamespace(namespace);
    md.getMetadata().setName(name);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    List<RoleSpec> roles = new ArrayList<>();
    for (LabelSelector selector : selectors) {
      RoleSpec role = new RoleSpec();
      role.setName("role" + roles.size());
      role.setSelector(selector);
      roles.add(role);
    }
    spec.setRoles(roles);
    md.setSpec(spec);
    policies.put(md);
    return md;
  }

  @Test
  void aRoleSelectsThePodsOfItsNamespaceCarryingEveryPairSortedByName() {
    pod("inference", "prefill-1", Map.of("app", "glm", "role", "prefill"));
    pod("inference", "prefill-0", Map.of("app", "glm", "role", "prefill", "extra", "x"));
    pod("inference", "decode-0", Map.of("app", "glm", "role", "decode"));
    pod("other", "prefill-0", Map.of("app", "glm", "role", "prefill"));

    assertThat(
            names(
                SelectionIndex.selected(
                    podView, "inference", matchLabels(Map.of("app", "glm", "role", "prefill")))))
        .containsExactly("prefill-0", "prefill-1");
    assertThat(
            names(
                SelectionIndex.selected(
                    podView, "inference", matchLabels(Map.of("role", "decode")))))
        .containsExactly("decode-0");
    assertThat(SelectionIndex.selected(podView, "inference", matchLabels(Map.of("role", "router"))))
        .isEmpty();
  }

  @Test
  void expressionsAreAppliedWithOrWithoutMatchLabels() {
    pod("inference", "prefill-0", Map.of("app", "glm", "role", "prefill"));
    pod("inference", "decode-0", Map.of("app", "glm", "role", "decode"));
    pod("inference", "router-0", Map.of("app", "glm", "role", "router"));
    pod("other", "decode-0", Map.of("app", "glm", "role", "decode"));
    LabelSelectorRequirement engines =
        new LabelSelectorRequirement("role", "In", List.of("prefill", "decode"));

    assertThat(
            names(
                SelectionIndex.selected(
                    podView,
                    "inference",
                    new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app", "glm"))
                        .withMatchExpressions(engines)
                        .build())))
        .containsExactly("decode-0", "prefill-0");
    // No matchLabels: nothing to look up, so the namespace is scanned, and the selector still
    // decides.
    assertThat(
            names(
                SelectionIndex.selected(
                    podView,
                    "inference",
                    new LabelSelectorBuilder().withMatchExpressions(engines).build())))
        .containsExactly("decode-0", "prefill-0");
  }

  @Test
  void anInvalidSelectorSelectsNoPod() {
    pod("inference", "prefill-0", Map.of("app", "glm", "role", "prefill"));

    assertThat(SelectionIndex.selected(podView, "inference", new LabelSelector())).isEmpty();
    assertThat(
            SelectionIndex.selected(
                podView,
                "inference",
                new LabelSelectorBuilder()
                    .withMatchLabels(Map.of("app", "glm"))
                    .withMatchExpressions(
                        new LabelSelectorRequirement("role", "Equals", List.of("prefill")))
                    .build()))
        .isEmpty();
  }

  @Test
  void thePoliciesThatMayConcernAPodIncludeEveryPolicyThatSelectsListsOrRecordedIt() {
    Pod pod = pod("inference", "prefill-0", Map.of("app", "glm", "role", "prefill"));
    policy("inference", "by-labels", matchLabels(Map.of("role", "prefill", "app", "glm")));
    policy(
        "inference",
        "by-expressions",
        new LabelSelectorBuilder()
            .withMatchExpressions(new LabelSelectorRequirement("role", "Exists", null))
            .build());
    policy("inference", "elsewhere", matchLabels(Map.of("role", "decode")));
    policy("other", "other-namespace", matchLabels(Map.of("role", "prefill")));
    ModelDeployment listing = policy("inference", "listing", matchLabels(Map.of("role", "decode")));
    listing.setStatus(new ModelDeploymentStatus());
    PodVerdictStatus listed = new PodVerdictStatus();
    listed.name = "prefill-0";
    listing.getStatus().pods.add(listed);
    policies.put(listing);
    policy("inference", "recorded", matchLabels(Map.of("role", "decode")));
    pod.getMetadata()
        .setAnnotations(
            Map.of(GateNames.VERDICTS_ANNOTATION, "{\"recorded\": {\"role\": \"role0\"}}"));
    pods.put(pod);

    assertThat(names(SelectionIndex.candidatePolicies(policies, pod, true)))
        .containsExactly("by-expressions", "by-labels", "listing", "recorded");
    assertThat(
            names(
                SelectionIndex.recordedBy(
                    podView, policies.get(new ResourceID("recorded", "inference")).orElseThrow())))
        .containsExactly("prefill-0");
  }

  @Test
  void aPolicyTheIndexMissesWhileItIsUpdatedIsStillFoundForThePodItSelects() {
    // fabric8's index takes a policy out of its entries and files it again on each update: a
    // lookup in between finds nothing.
    MemoryCache<ModelDeployment> midUpdate =
        new MemoryCache<>() {
          @Override
          public List<ModelDeployment> byIndex(String index, String key) {
            return List.of();
          }
        };
    SelectionIndex.register(midUpdate);
    ModelDeployment md = policy("inference", "glm", matchLabels(Map.of("app", "glm")));
    midUpdate.put(md);
    midUpdate.put(policy("other", "glm", matchLabels(Map.of("app", "glm"))));
    Pod pod = pod("inference", "serve-0", Map.of("app", "glm"));

    assertThat(names(SelectionIndex.candidatePolicies(midUpdate, pod, true)))
        .containsExactly("glm");
    // A pod the namespace's cache does not keep (no selector there selects it, no kvguard mark)
    // concerns no policy: its events cost no read of the namespace's policies.
    assertThat(SelectionIndex.candidatePolicies(midUpdate, pod, false)).isEmpty();
    assertThat(SelectionIndex.candidatePolicies(midUpdate, pod, true))
        .singleElement()
        .satisfies(found -> assertThat(found.getMetadata().getNamespace()).isEqualTo("inference"));
  }

  @Test
  void aRoleIsFiledUnderItsFirstMatchLabelByKeyOrderOrTheWholeNamespace() {
    ModelDeployment md =
        policy(
            "inference",
            "glm",
            matchLabels(Map.of("role", "prefill", "app", "glm")),
            matchLabels(Map.of("app", "glm", "role", "decode")),
            new LabelSelectorBuilder()
                .withMatchExpressions(new LabelSelectorRequirement("role", "Exists", null))
                .build());

    assertThat(SelectionIndex.policySelectKeys(md))
        .containsExactly("inference/app=glm", "inference/*");
  }

  /** An informer cache in memory: resources by namespace/name, and the indexers it was given. */
  private static class MemoryCache<T extends HasMetadata> implements IndexerResourceCache<T> {
    private final Map<ResourceID, T> resources = new HashMap<>();
    private final Map<String, Function<T, List<String>>> indexers = new HashMap<>();

    void put(T resource) {
      resources.put(ResourceID.fromResource(resource), resource);
    }

    @Override
    public void addIndexers(Map<String, Function<T, List<String>>> added) {
      indexers.putAll(added);
    }

    @Override
    public List<T> byIndex(String index, String key) {
      Function<T, List<String>> indexer = indexers.get(index);
      return resources.values().stream().filter(r -> indexer.apply(r).contains(key)).toList();
    }

    @Override
    public Optional<T> get(ResourceID id) {
      return Optional.ofNullable(resources.get(id));
    }

    @Override
    public Stream<ResourceID> keys() {
      return resources.keySet().stream();
    }

    @Override
    public Stream<T> list(Predicate<T> predicate) {
      return resources.values().stream().filter(predicate);
    }

    @Override
    public Stream<T> list(String namespace, Predicate<T> predicate) {
      return list(r -> namespace.equals(r.getMetadata().getNamespace()) && predicate.test(r));
    }
  }
}

package io.kvguard.reconciler;

import static io.kvguard.testing.OperatorHarness.role;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.testing.EmbeddedClusterTest;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import io.kvguard.testkit.EngineShapes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * kvguard caches the pods of the namespaces that hold a ModelDeployment and no others (issue 18
 * §2): a namespace is listed and watched from the first pass of a policy there until the last
 * policy there is gone, and a pod elsewhere is never read at all.
 */
class PodCacheScopeIT extends EmbeddedClusterTest {
  private static final long WINDOW = 1_048_576;
  private static final Map<String, String> SERVE = Map.of("app", "glm", "role", "serve");
  private static final String TENANT = "tenant-b";
  private static final String UNRELATED = "batch-jobs";

  private void namespace(String name) {
    h.client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  private Pod verifiedEnginePod(String namespace, String name) {
    return h.pods.createRunning(
        namespace,
        name,
        SERVE,
        h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)).port(),
        true);
  }

  private ModelDeployment policyIn(String namespace, String name) {
    ModelDeployment md = h.modelDeployment(name, WINDOW, role("serve", Engine.SGLANG, SERVE));
    md.getMetadata().setNamespace(namespace);
    return h.client.resources(ModelDeployment.class).inNamespace(namespace).resource(md).create();
  }

  private Optional<PodCondition> gate(String namespace, String pod) {
    Pod current = h.client.pods().inNamespace(namespace).withName(pod).get();
    return current.getStatus().getConditions().stream()
        .filter(c -> GateNames.CONDITION_TYPE.equals(c.getType()))
        .findFirst();
  }

  private boolean labelled(String namespace, String pod) {
    Map<String, String> labels =
        h.client.pods().inNamespace(namespace).withName(pod).get().getMetadata().getLabels();
    return labels != null && "true".equals(labels.get(GateNames.VERIFIED_LABEL));
  }

  /**
   * The operator's pod informers, by JOSDK event source name (what its health check reports on).
   */
  private Set<String> podSources() {
    return h.operator().operator().getRuntimeInfo().getRegisteredControllers().stream()
        .flatMap(c -> c.getControllerHealthInfo().eventSourceHealthIndicators().keySet().stream())
        .filter(name -> name.startsWith(PodCache.SOURCE_PREFIX))
        .collect(Collectors.toSet());
  }

  /**
   * What the operator's pod informers hold for the namespace, by pod name: {@code true} for a pod
   * kept whole (lean), {@code false} for one held as its key alone.
   */
  @SuppressWarnings("unchecked")
  private Map<String, Boolean> cached(String namespace) {
    return h.operator().operator().getRuntimeInfo().getRegisteredControllers().stream()
        .flatMap(
            c ->
                ((Controller<ModelDeployment>) c)
                    .getEventSourceManager().getEventSourcesFor(Pod.class).stream())
        .filter(source -> source.name().startsWith(PodCache.SOURCE_PREFIX + namespace))
        .flatMap(source -> ((InformerEventSource<Pod, ModelDeployment>) source).list(namespace))
        .collect(
            Collectors.toMap(
                p -> p.getMetadata().getName(), p -> !LeanPodStore.isKeyOnly(p), (a, b) -> a && b));
  }

  private List<EmbeddedApiServer.Request> podReads() {
    return h.operatorRequests().stream()
        .filter(
            r ->
                r.method().equals("GET")
                    && r.path().matches("/api/v1/(namespaces/[^/]+/)?pods([?].*)?"))
        .toList();
  }

  @Test
  void aPolicyInANewNamespaceSeesItsPodsAndPodsWhereNoPolicyIsAreNeverRead() {
    verifiedEnginePod(OperatorHarness.NAMESPACE, "serve-0");
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    namespace(TENANT);
    namespace(UNRELATED);
    verifiedEnginePod(TENANT, "serve-0");
    // Selected by the same labels, but no policy of its own namespace exists: it concerns nobody.
    verifiedEnginePod(UNRELATED, "serve-0");

    policyIn(TENANT, "glm-b");

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(gate(TENANT, "serve-0"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("True");
                        assertThat(c.getReason()).isEqualTo("PoolSufficient");
                      });
              assertThat(labelled(TENANT, "serve-0")).isTrue();
            });
    assertThat(podSources())
        .containsExactlyInAnyOrder("pods-" + OperatorHarness.NAMESPACE, "pods-" + TENANT);
    assertThat(gate(UNRELATED, "serve-0")).isEmpty();
    assertThat(podReads())
        .as("pods are read per namespace holding a policy, listed in pages, never cluster-wide")
        .isNotEmpty()
        .allSatisfy(
            r ->
                assertThat(r.path())
                    .matches(
                        "/api/v1/namespaces/("
                            + OperatorHarness.NAMESPACE
                            + "|"
                            + TENANT
                            + ")/pods[?].*"))
        .filteredOn(r -> !r.path().contains("watch=true"))
        .allSatisfy(r -> assertThat(r.path()).contains("limit=" + PodCache.LIST_PAGE_SIZE));
  }

  @Test
  void deletingTheLastPolicyOfANamespaceHandsItsPodsBackThenStopsCachingThem() {
    namespace(TENANT);
    verifiedEnginePod(TENANT, "serve-0");
    verifiedEnginePod(TENANT, "serve-1");
    policyIn(TENANT, "glm-b");
    policyIn(TENANT, "glm-c");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(labelled(TENANT, "serve-0")).isTrue();
              assertThat(labelled(TENANT, "serve-1")).isTrue();
            });
    assertThat(podSources()).containsExactly("pods-" + TENANT);

    // One of two policies goes: the namespace still holds one, so its pods stay cached and guarded.
    h.client.resources(ModelDeployment.class).inNamespace(TENANT).withName("glm-c").delete();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                h.client
                        .resources(ModelDeployment.class)
                        .inNamespace(TENANT)
                        .withName("glm-c")
                        .get()
                    == null);
    assertThat(podSources()).containsExactly("pods-" + TENANT);
    assertThat(labelled(TENANT, "serve-0")).isTrue();

    // The last one goes: its pods are handed back from the cache first, then the namespace is no
    // longer cached.
    h.client.resources(ModelDeployment.class).inNamespace(TENANT).withName("glm-b").delete();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(
                      h.client
                          .resources(ModelDeployment.class)
                          .inNamespace(TENANT)
                          .withName("glm-b")
                          .get())
                  .isNull();
              for (String pod : List.of("serve-0", "serve-1")) {
                assertThat(gate(TENANT, pod))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getReason()).isEqualTo("PolicyRemoved");
                        });
                assertThat(labelled(TENANT, pod)).isFalse();
                assertThat(
                        h.client
                            .pods()
                            .inNamespace(TENANT)
                            .withName(pod)
                            .get()
                            .getMetadata()
                            .getAnnotations())
                    .as("no verdict record is left behind")
                    .doesNotContainKey(GateNames.VERDICTS_ANNOTATION);
              }
              assertThat(podSources()).isEmpty();
            });

    // A policy created there again starts caching the namespace again and finds its pods.
    h.api.clearRequests();
    policyIn(TENANT, "glm-d");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(labelled(TENANT, "serve-0")).isTrue();
              assertThat(labelled(TENANT, "serve-1")).isTrue();
            });
    assertThat(podSources()).containsExactly("pods-" + TENANT);
    assertThat(podReads())
        .anySatisfy(
            r ->
                assertThat(r.path())
                    .startsWith("/api/v1/namespaces/" + TENANT + "/pods?")
                    .doesNotContain("watch=true"));
  }

  private static final Map<String, String> BATCH = Map.of("app", "glm", "role", "batch");

  /**
   * A verified engine pod beside the guarded one that no policy selects, without kvguard's
   * readiness gate.
   */
  private void servePodAndUnselectedBatchPod() {
    verifiedEnginePod(OperatorHarness.NAMESPACE, "serve-0");
    h.pods.createRunning(
        OperatorHarness.NAMESPACE,
        "batch-0",
        BATCH,
        h.engine(EngineShapes.sglang(WINDOW, null, "0.5.22", 2_040_000)).port(),
        false);
    h.create(h.modelDeployment("glm", WINDOW, role("serve", Engine.SGLANG, SERVE)));
    awaitGate("serve-0", "True", "PoolSufficient");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(cached(OperatorHarness.NAMESPACE))
                    .as("the pod no policy selects is held as its key alone")
                    .containsEntry("serve-0", true)
                    .containsEntry("batch-0", false));
    assertThat(gate(OperatorHarness.NAMESPACE, "batch-0")).isEmpty();
  }

  @Test
  void aPodRelabelledIntoASelectorIsCachedAndGated() {
    servePodAndUnselectedBatchPod();

    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("batch-0")
        .edit(
            pod -> {
              pod.getMetadata().getLabels().put("role", "serve");
              return pod;
            });

    awaitGate("batch-0", "True", "PoolSufficient");
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled("batch-0"));
    assertThat(cached(OperatorHarness.NAMESPACE)).containsEntry("batch-0", true);
  }

  @Test
  void aPolicyWhoseSelectorChangesGatesAPodItDidNotSelectBefore() {
    servePodAndUnselectedBatchPod();

    h.editSpec(
        "glm",
        spec ->
            spec.getRoles()
                .get(0)
                .setSelector(
                    new LabelSelectorBuilder()
                        .withMatchLabels(Map.of("app", "glm"))
                        .withMatchExpressions(
                            new LabelSelectorRequirementBuilder()
                                .withKey("role")
                                .withOperator("In")
                                .withValues("serve", "batch")
                                .build())
                        .build()));

    awaitGate("batch-0", "True", "PoolSufficient");
    await().atMost(Duration.ofSeconds(10)).until(() -> h.labelled("batch-0"));
    assertThat(h.labelled("serve-0")).isTrue();
    assertThat(cached(OperatorHarness.NAMESPACE))
        .containsEntry("batch-0", true)
        .containsEntry("serve-0", true);
  }

  @Test
  void aPodThePolicyLetGoStaysCachedUntilItIsHandedBackAndAnUnmarkedOneIsNot() {
    servePodAndUnselectedBatchPod();

    // serve-0 leaves the selector: the policy lets go of it shut, and the pod, carrying what
    // kvguard wrote, stays cached.
    h.client
        .pods()
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("serve-0")
        .edit(
            pod -> {
              pod.getMetadata().getLabels().put("role", "canary");
              return pod;
            });
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(h.labelled("serve-0")).isFalse();
              assertThat(h.getPod("serve-0").getMetadata().getAnnotations())
                  .doesNotContainKey(GateNames.VERDICTS_ANNOTATION);
            });
    assertThat(h.gate("serve-0"))
        .hasValueSatisfying(
            c -> {
              assertThat(c.getStatus()).isEqualTo("False");
              assertThat(c.getReason()).isEqualTo("NoLongerSelected");
            });
    assertThat(cached(OperatorHarness.NAMESPACE))
        .containsEntry("serve-0", true)
        .containsEntry("batch-0", false);
  }

  private static final String TENANT_C = "tenant-c";
  private static final Duration FIRST_LIST_DELAY = Duration.ofSeconds(3);

  /**
   * The operator's LISTs (not watches) of a namespace's pods, in the order the server received
   * them.
   */
  private List<EmbeddedApiServer.Request> podLists() {
    return podReads().stream()
        .filter(r -> r.path().startsWith("/api/v1/namespaces/") && !r.path().contains("watch=true"))
        .toList();
  }

  private static String namespaceOf(EmbeddedApiServer.Request list) {
    return list.path().split("/")[4];
  }

  @Test
  void withOneListPermitASecondNamespaceIsListedOnlyAfterTheFirstHasListedAndBothAreGated() {
    assertThat(io.kvguard.KvguardConfig.DEFAULT_POD_LIST_CONCURRENCY).isEqualTo(1);
    namespace(TENANT);
    namespace(TENANT_C);
    verifiedEnginePod(TENANT, "serve-0");
    verifiedEnginePod(TENANT_C, "serve-0");
    Map<String, String> podLists =
        Map.of(
            TENANT, Serialization.asJson(h.client.pods().inNamespace(TENANT).list()),
            TENANT_C, Serialization.asJson(h.client.pods().inNamespace(TENANT_C).list()));
    // The first namespace's LIST answer takes 3 s to arrive (answered with its pods as they are
    // now, by a timer, so the server keeps answering others meanwhile): the other namespace may
    // not start its LIST before that one is in.
    AtomicReference<String> delayed = new AtomicReference<>();
    h.api.faults(
        r -> {
          String path = r.getPath();
          if (!"GET".equals(r.getMethod())
              || !OperatorHarness.OPERATOR_AGENT.equals(r.getHeader("User-Agent"))
              || path.contains("watch=true")
              || !path.matches("/api/v1/namespaces/(" + TENANT + "|" + TENANT_C + ")/pods[?].*")) {
            return null;
          }
          String namespace = path.split("/")[4];
          if (!delayed.compareAndSet(null, namespace)) {
            return null;
          }
          return new MockResponse()
              .setResponseCode(200)
              .setHeader("Content-Type", "application/json")
              .setBody(podLists.get(namespace))
              .setBodyDelay(FIRST_LIST_DELAY);
        });

    policyIn(TENANT, "glm-b");
    policyIn(TENANT_C, "glm-c");

    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              for (String namespace : List.of(TENANT, TENANT_C)) {
                assertThat(gate(namespace, "serve-0"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getReason()).isEqualTo("PoolSufficient");
                        });
                assertThat(labelled(namespace, "serve-0")).isTrue();
              }
            });
    List<EmbeddedApiServer.Request> lists = podLists();
    assertThat(lists).extracting(PodCacheScopeIT::namespaceOf).contains(TENANT, TENANT_C);
    EmbeddedApiServer.Request first = lists.get(0);
    assertThat(namespaceOf(first)).isEqualTo(delayed.get());
    EmbeddedApiServer.Request second =
        lists.stream().filter(r -> !namespaceOf(r).equals(delayed.get())).findFirst().orElseThrow();
    assertThat(Duration.ofNanos(second.atNanos() - first.atNanos()))
        .as("the second namespace's LIST waits for the first namespace's LIST to be in")
        .isGreaterThanOrEqualTo(FIRST_LIST_DELAY);
  }
}

package io.kvguard.reconciler;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.javaoperatorsdk.operator.api.config.Cloner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.testing.OnePolicy;
import io.kvguard.testing.OperatorHarness;
import io.kvguard.testkit.EmbeddedApiServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Where a pass's status lands (ModelDeploymentReconciler.writeStatus): on the policy the pass
 * concluded about, never on another created under its name since. The status is trusted as a
 * stand-in for a probe (trustedRecord), so the deleted policy's conclusions must not become the new
 * one's. Before 9daaf75 the write was fabric8's editStatus, a JSON diff carrying the copy's
 * resourceVersion (fabric8 v7.5.2, OperationSupport.handlePatch: "include the resourceVersion in
 * the patch"), which a real API server answers 409 on any other version; the one-op patch carried
 * none and landed on whatever held the name.
 */
class StatusWriteTargetTest {
  private final OnePolicy glm = new OnePolicy();
  private final EmbeddedApiServer api = glm.api();
  private final NamespacedKubernetesClient client = glm.client();
  private volatile boolean deletedFromTheCache;

  @AfterEach
  void stop() {
    glm.close();
  }

  private ModelDeployment create() {
    return glm.create(List.of());
  }

  private ModelDeployment onServer() {
    return glm.onServer();
  }

  /**
   * A Context whose primary cache is the API server itself (JOSDK polls it after a 409 or 422:
   * v5.2.3, PrimaryUpdateAndCacheUtils.pollLocalCache) and that has no controller event source (a
   * write that is accepted then fails to be cached: the test looks at the server only).
   */
  @SuppressWarnings("unchecked")
  private Context<ModelDeployment> context() {
    Cloner cloner =
        new Cloner() {
          @Override
          public <R extends HasMetadata> R clone(R object) {
            return client.getKubernetesSerialization().clone(object);
          }
        };
    Object configurationService =
        proxy(
            io.javaoperatorsdk.operator.api.config.ConfigurationService.class,
            Map.of("getResourceCloner", cloner));
    Object configuration =
        proxy(
            io.javaoperatorsdk.operator.api.config.ControllerConfiguration.class,
            Map.of("getConfigurationService", configurationService));
    Object cache =
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {io.javaoperatorsdk.operator.api.reconciler.IndexedResourceCache.class},
            (p, method, args) -> {
              if (method.getName().equals("get") && args.length == 1) {
                ResourceID id = (ResourceID) args[0];
                return Optional.ofNullable(deletedFromTheCache ? null : onServer())
                    .filter(md -> id.getName().equals("glm"));
              }
              throw new UnsupportedOperationException(method.getName());
            });
    Object retriever =
        proxy(
            io.javaoperatorsdk.operator.processing.event.EventSourceRetriever.class,
            new java.util.HashMap<>(Map.of()));
    return (Context<ModelDeployment>)
        proxy(
            Context.class,
            Map.of(
                "getClient", client,
                "getPrimaryCache", cache,
                "getControllerConfiguration", configuration,
                "eventSourceRetriever", retriever));
  }

  private Object proxy(Class<?> type, Map<String, Object> answers) {
    return Proxy.newProxyInstance(
        getClass().getClassLoader(),
        new Class<?>[] {type},
        (p, method, args) -> {
          if (answers.containsKey(method.getName())) {
            return answers.get(method.getName());
          }
          if (method.getName().equals("getControllerEventSource")) {
            return null;
          }
          throw new UnsupportedOperationException(type.getSimpleName() + "." + method.getName());
        });
  }

  private static void writeStatus(
      ModelDeployment md, Context<ModelDeployment> context, ModelDeploymentStatus status)
      throws Exception {
    Method write =
        ModelDeploymentReconciler.class.getDeclaredMethod(
            "writeStatus", ModelDeployment.class, Context.class, ModelDeploymentStatus.class);
    write.setAccessible(true);
    try {
      write.invoke(null, md, context, status);
    } catch (InvocationTargetException e) {
      // Accepted, then not cached (no controller event source here): the server is what counts.
      if (!(e.getCause() instanceof NullPointerException)) {
        throw e;
      }
    }
  }

  @Test
  void aDeletedPolicysStatusDoesNotLandOnThePolicyCreatedAgainUnderItsName() throws Exception {
    ModelDeployment deleted = create();
    client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    ModelDeployment again = create();
    assertThat(again.getMetadata().getUid()).isNotEqualTo(deleted.getMetadata().getUid());

    ModelDeploymentStatus concluded = new ModelDeploymentStatus();
    concluded.verified = "1/1";
    concluded.observedGeneration = 1L;
    writeStatus(deleted, context(), concluded);

    assertThat(onServer().getMetadata().getUid()).isEqualTo(again.getMetadata().getUid());
    assertThat(onServer().getStatus()).isNull();
  }

  @Test
  void aPassReadingAStaleCopyStillWritesItsPolicysStatus() throws Exception {
    ModelDeployment stale = create();
    // A spec edit the pass did not see: another resourceVersion, the same policy.
    client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .edit(
            md -> {
              md.getSpec().setContextWindow(2_097_152L);
              return md;
            });
    ModelDeploymentStatus concluded = new ModelDeploymentStatus();
    concluded.verified = "1/1";
    writeStatus(stale, context(), concluded);

    assertThat(onServer().getStatus().verified).isEqualTo("1/1");
    assertThat(onServer().getSpec().getContextWindow()).isEqualTo(2_097_152L);
  }

  @Test
  void theStatusWriteIsOnePatchOfTheStatusAlone() throws Exception {
    ModelDeployment read = create();
    api.clearRequests();
    ModelDeploymentStatus concluded = new ModelDeploymentStatus();
    concluded.verified = "1/1";

    writeStatus(read, context(), concluded);

    assertThat(api.requests())
        .extracting(EmbeddedApiServer.Request::method, EmbeddedApiServer.Request::path)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                "PATCH",
                "/apis/kvguard.io/v1alpha1/namespaces/"
                    + OperatorHarness.NAMESPACE
                    + "/modeldeployments/glm/status"));
    assertThat(onServer().getStatus().verified).isEqualTo("1/1");
  }

  @Test
  void aPolicyDeletedDuringItsPassEndsThePassWithoutAFailure() throws Exception {
    ModelDeployment read = create();
    client
        .resources(ModelDeployment.class)
        .inNamespace(OperatorHarness.NAMESPACE)
        .withName("glm")
        .delete();
    ModelDeploymentStatus concluded = new ModelDeploymentStatus();
    concluded.verified = "1/1";

    // Before: the 404 failed the pass, an ERROR in the log and a failed reconcile for a deletion.
    writeStatus(read, context(), concluded);

    assertThat(onServer()).isNull();
  }

  @Test
  void aStatusWriteRefusedWith404WhileThePolicyExistsStillFailsThePass() {
    ModelDeployment read = create();
    // A CRD installed without its status subresource answers every status write 404.
    api.faults(
        request ->
            request.getMethod().equals("PATCH") && request.getPath().endsWith("/glm/status")
                ? new io.fabric8.mockwebserver.http.MockResponse()
                    .setResponseCode(404)
                    .setBody(EmbeddedApiServer.status(404, "NotFound", "the server could not find"))
                : null);
    ModelDeploymentStatus concluded = new ModelDeploymentStatus();

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> writeStatus(read, context(), concluded))
        .hasRootCauseInstanceOf(io.fabric8.kubernetes.client.KubernetesClientException.class);
  }

  @Test
  void
      aPolicyGoneFromTheCacheWhileItsRefusedStatusWriteWaitsForANewerCopyEndsThePassWithoutAFailure()
          throws Exception {
    ModelDeployment read = create();
    // The write is refused as stale (409), and the policy is deleted before JOSDK's cache shows a
    // newer copy: JOSDK's poll of its cache then finds nothing (orElseThrow).
    api.faults(
        request -> {
          if (!(request.getMethod().equals("PATCH") && request.getPath().endsWith("/glm/status"))) {
            return null;
          }
          // The informer has seen the deletion (a real server would answer 404 or 409 here).
          deletedFromTheCache = true;
          return new io.fabric8.mockwebserver.http.MockResponse()
              .setResponseCode(409)
              .setBody(EmbeddedApiServer.status(409, "Conflict", "the object has been modified"));
        });
    ModelDeploymentStatus concluded = new ModelDeploymentStatus();

    writeStatus(read, context(), concluded);

    assertThat(onServer().getStatus()).isNull();
  }
}

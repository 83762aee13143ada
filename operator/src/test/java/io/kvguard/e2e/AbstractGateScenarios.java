package io.kvguard.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.kvguard.customresource.AdvisoryMode;
import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.ProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.testkit.FakeEngineOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The core scenarios, written once: {@code GateScenariosIT} runs them on the embedded API server in
 * every build, {@code GateScenariosKT} on a real cluster (profile e2e). Each test gets a fresh
 * cluster (or namespace) from {@link #startCluster()}.
 */
public abstract class AbstractGateScenarios {
  protected static final long WINDOW = 1_048_576;
  protected static final long INCIDENT_POOL = 681_280;
  protected static final long FIXED_POOL = 2_040_000;
  protected static final long AMPLE_POOL = 4_000_000;

  protected ClusterDriver cluster;

  /** A cluster with the operator watching {@link ClusterDriver#namespace()}. */
  protected abstract ClusterDriver startCluster() throws Exception;

  @BeforeEach
  void startClusterForTest() throws Exception {
    cluster = startCluster();
  }

  @AfterEach
  void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void incidentReplayGatesThePrefillPodsUntilTheirEnginesRestartWithALargerPool() {
    FakeEngineOptions prefill = FakeEngineOptions.sglang(INCIDENT_POOL, 2, WINDOW, "prefill");
    cluster.createEnginePod("glm-prefill-0", labels("glm", "prefill"), prefill);
    cluster.createEnginePod("glm-prefill-1", labels("glm", "prefill"), prefill);
    cluster.createEnginePod(
        "glm-decode-0",
        labels("glm", "decode"),
        FakeEngineOptions.sglang(AMPLE_POOL, 2, WINDOW, "decode"));
    cluster.create(modelDeployment("glm", role("prefill", "glm"), role("decode", "glm")));

    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              for (String pod : List.of("glm-prefill-0", "glm-prefill-1")) {
                assertThat(cluster.gate(pod))
                    .as(pod)
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("False");
                          assertThat(c.getReason()).isEqualTo("PoolTooSmall");
                          assertThat(c.getMessage())
                              .contains("KV pool 681280 tokens < context window 1048576");
                        });
                assertThat(cluster.labelled(pod)).as(pod + " labelled").isFalse();
              }
              // The engines report 0.5.22, which the post-mortem alone names as fixed: decode's
              // pool holds the window, but its version proves nothing of the prefill/decode path.
              assertThat(cluster.gate("glm-decode-0"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo("KnownUnsafeEngine");
                        assertThat(c.getMessage()).contains("post-mortem alone", "--pd-router");
                      });
              assertThat(cluster.labelled("glm-decode-0")).isFalse();
              assertThat(cluster.condition("glm", "Ready")).hasValue("False");
              assertThat(cluster.modelDeployment("glm").getStatus().verified).isEqualTo("0/3");
              assertThat(cluster.events())
                  .extracting(Event::getReason)
                  .contains("PoolTooSmall", "KnownUnsafeEngine");
              if (cluster.kubeletComputesReadiness()) {
                assertThat(cluster.podReady("glm-prefill-0"))
                    .as("kubelet Ready of a gated pod")
                    .hasValue("False");
              }
            });

    FakeEngineOptions fixed = prefill.withPool(FIXED_POOL);
    cluster.restartEngine("glm-prefill-0", fixed);
    cluster.restartEngine("glm-prefill-1", fixed);
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              for (String pod : List.of("glm-prefill-0", "glm-prefill-1")) {
                assertThat(cluster.verdict("glm", pod))
                    .as(pod)
                    .hasValueSatisfying(
                        v -> {
                          assertThat(v.poolTokens).isEqualTo(FIXED_POOL);
                          assertThat(v.reason).isEqualTo("KnownUnsafeEngine");
                        });
                assertThat(cluster.labelled(pod)).as(pod + " labelled").isFalse();
              }
            });

    // The platform team tested the route through the router by hand (check --pd-router) and
    // accepts the advisory's risk knowingly.
    cluster
        .client()
        .resources(ModelDeployment.class)
        .inNamespace(cluster.namespace())
        .withName("glm")
        .edit(
            md -> {
              md.getSpec().setEngineAdvisories(AdvisoryMode.Disabled);
              return md;
            });

    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              for (String pod : List.of("glm-prefill-0", "glm-prefill-1", "glm-decode-0")) {
                assertThat(cluster.gate(pod))
                    .as(pod)
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getReason()).isEqualTo("PoolSufficient");
                        });
                assertThat(cluster.labelled(pod)).as(pod + " labelled").isTrue();
                if (cluster.kubeletComputesReadiness()) {
                  assertThat(cluster.podReady(pod)).as(pod + " kubelet Ready").hasValue("True");
                }
              }
              assertThat(cluster.verdict("glm", "glm-prefill-0"))
                  .hasValueSatisfying(
                      v -> {
                        assertThat(v.poolTokens).isEqualTo(FIXED_POOL);
                        assertThat(v.restartCount)
                            .as("the verdict is about the restarted container")
                            .isEqualTo(1);
                      });
              assertThat(cluster.condition("glm", "Ready")).hasValue("True");
              assertThat(cluster.condition("glm", "PoolsVerified")).hasValue("True");
              assertThat(cluster.modelDeployment("glm").getStatus().verified).isEqualTo("3/3");
            });
  }

  @Test
  void aVerifiedPodsEngineRestartShutsItsGateUntilTheNewProcessIsVerified() {
    FakeEngineOptions engine = FakeEngineOptions.sglang(FIXED_POOL, 1, WINDOW, null);
    cluster.createEnginePod("chat-0", labels("chat", "serve"), engine);
    cluster.create(modelDeployment("chat", role("serve", "chat")));
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              assertThat(cluster.gate("chat-0"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              assertThat(cluster.labelled("chat-0")).isTrue();
            });

    try (GateHistory history = new GateHistory(cluster, "chat-0")) {
      // The same figures after the restart: the gate must still shut, because nobody measured the
      // new process.
      cluster.restartEngine("chat-0", engine);

      await()
          .atMost(cluster.patience())
          .untilAsserted(
              () -> {
                assertThat(cluster.verdict("chat", "chat-0"))
                    .hasValueSatisfying(
                        v -> {
                          assertThat(v.restartCount).isEqualTo(1);
                          assertThat(v.reason).isEqualTo("PoolSufficient");
                        });
                assertThat(cluster.gate("chat-0"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
                assertThat(cluster.labelled("chat-0")).isTrue();
                assertThat(history.closedThenReopened())
                    .as("gate states seen: %s", history.states())
                    .isTrue();
              });
    }
  }

  @Test
  void deletingTheModelDeploymentHandsEveryPodBackOpenWithPolicyRemoved() {
    cluster.createEnginePod(
        "mixed-big",
        labels("mixed", "serve"),
        FakeEngineOptions.sglang(FIXED_POOL, 1, WINDOW, null));
    cluster.createEnginePod(
        "mixed-small",
        labels("mixed", "serve"),
        FakeEngineOptions.sglang(INCIDENT_POOL, 1, WINDOW, null));
    cluster.create(modelDeployment("mixed", role("serve", "mixed")));
    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              assertThat(cluster.gate("mixed-big"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
              // The verified pod carries the label before the deletion, so its removal below is a
              // change, not a given.
              assertThat(cluster.labelled("mixed-big")).isTrue();
              assertThat(cluster.gate("mixed-small"))
                  .hasValueSatisfying(c -> assertThat(c.getReason()).isEqualTo("PoolTooSmall"));
            });

    cluster.delete("mixed");

    await()
        .atMost(cluster.patience())
        .untilAsserted(
            () -> {
              for (String pod : List.of("mixed-big", "mixed-small")) {
                assertThat(cluster.gate(pod))
                    .as(pod)
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("True");
                          assertThat(c.getReason()).isEqualTo("PolicyRemoved");
                          assertThat(c.getMessage()).contains("ModelDeployment mixed was deleted");
                        });
                // The label vouches for a verified pool; with no policy left nothing vouches for
                // it.
                assertThat(cluster.labelled(pod)).as(pod + " labelled").isFalse();
              }
              assertThat(cluster.modelDeployment("mixed"))
                  .as("the finalizer was released")
                  .isNull();
            });
  }

  protected static Map<String, String> labels(String app, String role) {
    return Map.of("app", app, "role", role);
  }

  protected static RoleSpec role(String name, String app) {
    RoleSpec role = new RoleSpec();
    role.setName(name);
    role.setEngine(Engine.SGLANG);
    role.setSelector(new LabelSelectorBuilder().withMatchLabels(labels(app, name)).build());
    role.setPort(new IntOrString(ClusterDriver.ENGINE_PORT));
    return role;
  }

  protected static ModelDeployment modelDeployment(String name, RoleSpec... roles) {
    ModelDeployment md = new ModelDeployment();
    md.getMetadata().setName(name);
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.setModel("zai-org/GLM-5.3");
    spec.setContextWindow(WINDOW);
    spec.setRoles(new ArrayList<>(List.of(roles)));
    // A failed probe is retried after periodSeconds; on a real cluster the first probe after a
    // container start often finds the engine not listening yet, and the default 60 s would dominate
    // the suite's runtime.
    ProbeSpec probe = new ProbeSpec();
    probe.setPeriodSeconds(5);
    spec.setProbe(probe);
    md.setSpec(spec);
    return md;
  }
}

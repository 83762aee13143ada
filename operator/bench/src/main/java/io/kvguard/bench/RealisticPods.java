package io.kvguard.bench;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.FieldsV1;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.SimulatedPods;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Pods as a Deployment of an inference server makes them on a real cluster, for the pod-cache
 * benchmark: three containers with 60 environment variables each, probes, resources and volume
 * mounts; managed fields of the controller and the kubelet (FieldsV1 naming each field they set, as
 * the API server records them); status with conditions, container states and last states. About 27
 * KB of JSON each. Running, with status, as created.
 */
final class RealisticPods {
  private static final List<String> CONTAINERS =
      List.of(SimulatedPods.ENGINE_CONTAINER, "proxy", "log-shipper");
  private static final int ENV_PER_CONTAINER = 60;

  private RealisticPods() {}

  /**
   * {@code enginePort} < 0: the engine container declares no engine port (a pod no role probes).
   */
  static Pod pod(
      String namespace,
      String name,
      Map<String, String> labels,
      int enginePort,
      boolean readinessGate) {
    List<Container> containers = new ArrayList<>();
    Map<String, Object> containerFields = new LinkedHashMap<>();
    for (String container : CONTAINERS) {
      List<EnvVar> env = new ArrayList<>();
      Map<String, Object> envFields = new LinkedHashMap<>();
      envFields.put(".", Map.of());
      for (int i = 0; i < ENV_PER_CONTAINER; i++) {
        String var = "APP_SETTING_" + container.toUpperCase().replace('-', '_') + "_" + i;
        env.add(
            new EnvVar(
                var, "value-" + i + "-" + UUID.nameUUIDFromBytes((name + var).getBytes()), null));
        envFields.put(
            "k:{\"name\":\"" + var + "\"}",
            Map.of(".", Map.of(), "f:name", Map.of(), "f:value", Map.of()));
      }
      ContainerBuilder builder =
          new ContainerBuilder()
              .withName(container)
              .withImage("registry.example.com/" + container + ":v1.2.3")
              .withArgs("--config", "/etc/" + container + "/config.yaml", "--log-level", "info")
              .withEnv(env)
              .withNewResources()
              .addToRequests("cpu", new Quantity("2"))
              .addToRequests("memory", new Quantity("8Gi"))
              .addToLimits("memory", new Quantity("16Gi"))
              .endResources()
              .addNewVolumeMount()
              .withName("config")
              .withMountPath("/etc/" + container)
              .withReadOnly(true)
              .endVolumeMount()
              .addNewVolumeMount()
              .withName("kube-api-access")
              .withMountPath("/var/run/secrets/kubernetes.io/serviceaccount")
              .withReadOnly(true)
              .endVolumeMount()
              .withNewLivenessProbe()
              .withNewHttpGet()
              .withPath("/healthz")
              .withNewPort(8081)
              .endHttpGet()
              .withPeriodSeconds(10)
              .endLivenessProbe()
              .withTerminationMessagePath("/dev/termination-log")
              .withTerminationMessagePolicy("File")
              .withImagePullPolicy("IfNotPresent");
      if (container.equals(SimulatedPods.ENGINE_CONTAINER) && enginePort >= 0) {
        builder
            .addNewPort()
            .withName(SimulatedPods.ENGINE_PORT_NAME)
            .withContainerPort(enginePort)
            .withProtocol("TCP")
            .endPort();
      }
      containers.add(builder.build());
      containerFields.put(
          "k:{\"name\":\"" + container + "\"}",
          Map.of(
              ".",
              Map.of(),
              "f:env",
              envFields,
              "f:image",
              Map.of(),
              "f:args",
              Map.of(),
              "f:resources",
              Map.of(".", Map.of(), "f:limits", Map.of(), "f:requests", Map.of()),
              "f:volumeMounts",
              Map.of(),
              "f:livenessProbe",
              Map.of()));
    }
    FieldsV1 controllerFields = new FieldsV1();
    controllerFields.setAdditionalProperty(
        "f:metadata", Map.of("f:labels", Map.of(), "f:ownerReferences", Map.of()));
    controllerFields.setAdditionalProperty(
        "f:spec", Map.of("f:containers", containerFields, "f:volumes", Map.of()));
    FieldsV1 kubeletFields = new FieldsV1();
    kubeletFields.setAdditionalProperty(
        "f:status",
        Map.of(
            "f:conditions",
            Map.of(),
            "f:containerStatuses",
            Map.of(),
            "f:hostIP",
            Map.of(),
            "f:phase",
            Map.of(),
            "f:podIP",
            Map.of(),
            "f:podIPs",
            Map.of(),
            "f:startTime",
            Map.of()));
    List<ContainerStatus> statuses = new ArrayList<>();
    for (String container : CONTAINERS) {
      statuses.add(
          new ContainerStatusBuilder()
              .withName(container)
              .withContainerID(
                  "containerd://"
                      + UUID.randomUUID().toString().replace("-", "")
                      + "0123456789abcdef0123456789abcdef")
              .withRestartCount(0)
              .withReady(true)
              .withStarted(true)
              .withImage("registry.example.com/" + container + ":v1.2.3")
              .withImageID(
                  "registry.example.com/" + container + "@sha256:" + "0123456789abcdef".repeat(4))
              .withNewState()
              .withNewRunning()
              .withStartedAt("2026-12-01T08:00:00Z")
              .endRunning()
              .endState()
              .withNewLastState()
              .withNewTerminated()
              .withExitCode(137)
              .withReason("OOMKilled")
              .withStartedAt("2026-12-01T07:00:00Z")
              .withFinishedAt("2026-12-01T07:59:59Z")
              .endTerminated()
              .endLastState()
              .build());
    }
    PodBuilder builder =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .withLabels(labels)
            .withGenerateName(name.substring(0, Math.max(1, name.lastIndexOf('-') + 1)))
            .addToAnnotations("prometheus.io/scrape", "true")
            .addToAnnotations("prometheus.io/port", "9090")
            .addToAnnotations("kubectl.kubernetes.io/restartedAt", "2026-12-01T07:00:00Z")
            .addNewOwnerReference()
            .withApiVersion("apps/v1")
            .withKind("ReplicaSet")
            .withName(name + "-rs")
            .withUid(UUID.nameUUIDFromBytes(name.getBytes()).toString())
            .withController(true)
            .withBlockOwnerDeletion(true)
            .endOwnerReference()
            .addToManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("kube-controller-manager")
                    .withOperation("Update")
                    .withApiVersion("v1")
                    .withTime("2026-12-01T07:00:00Z")
                    .withFieldsType("FieldsV1")
                    .withFieldsV1(controllerFields)
                    .build())
            .addToManagedFields(
                new ManagedFieldsEntryBuilder()
                    .withManager("kubelet")
                    .withOperation("Update")
                    .withSubresource("status")
                    .withApiVersion("v1")
                    .withTime("2026-12-01T08:00:00Z")
                    .withFieldsType("FieldsV1")
                    .withFieldsV1(kubeletFields)
                    .build())
            .endMetadata()
            .withNewSpec()
            .withContainers(containers)
            .withServiceAccountName("inference")
            .withNodeName("gpu-node-17")
            .withRestartPolicy("Always")
            .withTerminationGracePeriodSeconds(30L)
            .withDnsPolicy("ClusterFirst")
            .withSchedulerName("default-scheduler")
            .withPriority(0)
            .withEnableServiceLinks(true)
            .addNewVolume()
            .withName("config")
            .withNewConfigMap()
            .withName("inference-config")
            .endConfigMap()
            .endVolume()
            .addNewVolume()
            .withName("kube-api-access")
            .withNewProjected()
            .withDefaultMode(420)
            .endProjected()
            .endVolume()
            .addNewToleration()
            .withKey("nvidia.com/gpu")
            .withOperator("Exists")
            .withEffect("NoSchedule")
            .endToleration()
            .addNewToleration()
            .withKey("node.kubernetes.io/not-ready")
            .withOperator("Exists")
            .withEffect("NoExecute")
            .withTolerationSeconds(300L)
            .endToleration()
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .withPodIP("127.0.0.1")
            .withHostIP("10.0.3.17")
            .addNewPodIP("127.0.0.1")
            .withQosClass("Burstable")
            .withStartTime("2026-12-01T07:00:00Z")
            .addNewCondition()
            .withType("PodReadyToStartContainers")
            .withStatus("True")
            .withLastTransitionTime("2026-12-01T07:00:01Z")
            .endCondition()
            .addNewCondition()
            .withType("Initialized")
            .withStatus("True")
            .withLastTransitionTime("2026-12-01T07:00:00Z")
            .endCondition()
            .addNewCondition()
            .withType("Ready")
            .withStatus("False")
            .withLastTransitionTime("2026-12-01T08:00:00Z")
            .endCondition()
            .addNewCondition()
            .withType("ContainersReady")
            .withStatus("True")
            .withLastTransitionTime("2026-12-01T08:00:00Z")
            .endCondition()
            .addNewCondition()
            .withType("PodScheduled")
            .withStatus("True")
            .withLastTransitionTime("2026-12-01T07:00:00Z")
            .endCondition()
            .withContainerStatuses(statuses)
            .endStatus();
    if (readinessGate) {
      builder
          .editSpec()
          .addNewReadinessGate()
          .withConditionType(GateNames.CONDITION_TYPE)
          .endReadinessGate()
          .endSpec();
    }
    return builder.build();
  }
}

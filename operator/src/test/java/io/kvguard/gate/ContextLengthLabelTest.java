package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kvguard.verdict.GateDecision;
import io.kvguard.verdict.GateReason;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The planner's context-length label (spec.routing.publishContextLengthLabel): "0-N" with N =
 * min(measured pool, engine context) on verified pods only, removed otherwise, left alone for
 * policies that do not publish it.
 */
class ContextLengthLabelTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String LABEL = "llm-d.ai/context-length-range";
  private static final GateDecision OPEN =
      new GateDecision(true, GateReason.PoolSufficient, "pool 262144 tokens");
  private static final GateDecision SHUT =
      new GateDecision(false, GateReason.PoolTooSmall, "pool 65536 tokens");
  private static final GateDecision AUDIT =
      new GateDecision(true, GateReason.Audit, "audit mode, gate not enforced");

  @Test
  void aVerifiedPodGetsTheSmallerOfPoolAndEngineContext() throws Exception {
    JsonNode patch =
        patch(
            pod(Map.of("app", "llm", "kvguard.io/verified", "true")),
            OPEN,
            publishing(verified(262144L, 131072L)));

    assertThat(patch.toString())
        .contains(
            "{\"op\":\"add\",\"path\":\"/metadata/labels/llm-d.ai~1context-length-range\",\"value\":\"0-131072\"}");
    // Added only while the judged container still runs, like the routing label.
    assertThat(patch.toString())
        .contains(
            "{\"op\":\"test\",\"path\":\"/status/containerStatuses/0/containerID\",\"value\":\"containerd://abc\"}");
    assertThat(GatePatchPlanner.contextLengthRange(OPEN, verified(100_000L, 131072L)))
        .hasValue("0-100000");
  }

  @Test
  void theLabelGoesAwayWhenThePodIsNoLongerVerified() throws Exception {
    Pod labelled = pod(Map.of("app", "llm", "kvguard.io/verified", "true", LABEL, "0-131072"));

    JsonNode patch = patch(labelled, SHUT, publishing(refused()));

    assertThat(patch.toString())
        .contains(
            "{\"op\":\"test\",\"path\":\"/metadata/labels/llm-d.ai~1context-length-range\",\"value\":\"0-131072\"}",
            "{\"op\":\"remove\",\"path\":\"/metadata/labels/llm-d.ai~1context-length-range\"}",
            "{\"op\":\"remove\",\"path\":\"/metadata/labels/kvguard.io~1verified\"}");
    assertThat(
            patch(labelled, GateDecision.policyRemoved("llm"), RecordUpdate.remove("llm", true))
                .toString())
        .contains(
            "{\"op\":\"remove\",\"path\":\"/metadata/labels/llm-d.ai~1context-length-range\"}");
  }

  @Test
  void nothingKvguardDidNotMeasureIsPublished() {
    assertThat(GatePatchPlanner.contextLengthRange(AUDIT, refused()))
        .as("audit opens a refused pod's gate")
        .isEmpty();
    assertThat(GatePatchPlanner.contextLengthRange(OPEN, verified(null, 131072L)))
        .as("pool unknown")
        .isEmpty();
    assertThat(GatePatchPlanner.contextLengthRange(OPEN, null)).as("no record").isEmpty();
    assertThat(GatePatchPlanner.contextLengthRange(AUDIT, verified(262144L, 131072L)))
        .hasValue("0-131072");
  }

  @Test
  void anUnknownEngineContextPublishesThePoolAlone() {
    // llm-d's filter keeps a pod without the label ("they accept any context length") and its
    // scorer gives it 0.5: leaving a verified pod unlabelled because its engine reports no context
    // length would make it the one pod that takes every prompt, however long. Its measured pool is
    // still a bound it is proven not to exceed.
    assertThat(GatePatchPlanner.contextLengthRange(OPEN, verified(262144L, null)))
        .hasValue("0-262144");
  }

  @Test
  void aPolicyThatDoesNotPublishLeavesAHandSetLabelAlone() {
    Pod handSet = pod(Map.of("app", "llm", "kvguard.io/verified", "true", LABEL, "0-2048"));

    assertThat(
            GatePatchPlanner.labelPatch(
                handSet, OPEN, new RecordUpdate("llm", verified(262144L, 131072L))))
        .isEmpty();
    assertThat(GatePatchPlanner.labelPatch(handSet, OPEN)).isEmpty();
    assertThat(
            GatePatchPlanner.labelPatch(
                pod(Map.of("kvguard.io/verified", "true", LABEL, "0-131072")),
                OPEN,
                publishing(verified(262144L, 131072L))))
        .as("already published")
        .isEmpty();
  }

  @Test
  void aPodWithoutLabelsGetsBothInOneMap() throws Exception {
    Pod bare = new PodBuilder(pod(Map.of())).editMetadata().withLabels(null).endMetadata().build();

    JsonNode patch = patch(bare, OPEN, publishing(verified(262144L, 131072L)));

    JsonNode add = patch.get(patch.size() - 1);
    assertThat(add.get("path").asText()).isEqualTo("/metadata/labels");
    assertThat(add.get("value"))
        .isEqualTo(
            JSON.readTree("{\"kvguard.io/verified\":\"true\",\"" + LABEL + "\":\"0-131072\"}"));
  }

  private static JsonNode patch(Pod pod, GateDecision decision, RecordUpdate update)
      throws Exception {
    return JSON.readTree(GatePatchPlanner.labelPatch(pod, decision, update).orElseThrow());
  }

  private static RecordUpdate publishing(VerdictRecord record) {
    return new RecordUpdate("llm", record, true);
  }

  private static VerdictRecord verified(Long pool, Long engineContext) {
    return new VerdictRecord(
        "serve",
        "Verified",
        "PoolSufficient",
        "containerd://abc",
        0,
        pool,
        null,
        engineContext,
        "0.11.0",
        null,
        null,
        null,
        null,
        null,
        "2026-01-01T00:00:00Z");
  }

  private static VerdictRecord refused() {
    return new VerdictRecord(
        "serve",
        "Refused",
        "PoolTooSmall",
        "containerd://abc",
        0,
        65536L,
        null,
        131072L,
        "0.11.0",
        null,
        null,
        null,
        null,
        null,
        "2026-01-01T00:00:00Z");
  }

  private static Pod pod(Map<String, String> labels) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("serve-0")
        .withNamespace("inference")
        .withUid("uid-1")
        .withResourceVersion("7")
        .withLabels(new HashMap<>(labels))
        .endMetadata()
        .withNewStatus()
        .addNewContainerStatus()
        .withName("vllm")
        .withContainerID("containerd://abc")
        .withRestartCount(0)
        .withReady(true)
        .endContainerStatus()
        .endStatus()
        .build();
  }
}

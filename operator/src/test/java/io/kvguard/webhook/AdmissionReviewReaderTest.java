package io.kvguard.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvguard.gate.GateNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the webhook keeps of a review, and what it answers where it keeps only part. */
class AdmissionReviewReaderTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String podCreate(String labels) {
    return "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        + "\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        + "\"namespace\":\"inference\",\"operation\":\"CREATE\",\"object\":{\"metadata\":{"
        + "\"labels\":{"
        + labels
        + "}},\"spec\":{\"containers\":[]}}}}";
  }

  /** Padding the labels past what is read must not keep kvguard's own on the pod. */
  @Test
  void kvguardsLabelsAfterMoreLabelsThanAreReadAreStillRemoved() throws Exception {
    StringBuilder labels = new StringBuilder();
    for (int i = 0; i < AdmissionReviewReader.MAX_LABELS + 10; i++) {
      labels.append("\"l").append(i).append("\":\"x\",");
    }
    labels.append("\"").append(GateNames.VERIFIED_LABEL).append("\":\"true\"");

    GateInjection.Decision decision =
        GateInjection.decide(
            AdmissionReviewReader.read(
                podCreate(labels.toString()).getBytes(StandardCharsets.UTF_8)),
            List.of());

    assertThat(decision.outcome()).isEqualTo(GateInjection.Outcome.error);
    assertThat(decision.patch())
        .contains("[{\"op\":\"remove\",\"path\":\"/metadata/labels/kvguard.io~1verified\"}]");
  }

  /** The API server refuses an answer under another uid; a broken body's uid is kept if read. */
  @Test
  void aReviewBrokenAfterItsUidIsAllowedUnderThatUid() throws Exception {
    byte[] broken =
        podCreate("\"a\":\"b\"")
            .replace("\"containers\":[]", "\"containers\":[")
            .getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> AdmissionReviewReader.read(broken))
        .isInstanceOf(AdmissionReviewReader.UnreadableReview.class);

    JsonNode response =
        JSON.readTree(
                new AdmissionHandler(namespace -> List.of(), new SimpleMeterRegistry())
                    .apply(broken))
            .path("response");

    assertThat(response.path("uid").asText()).isEqualTo("u1");
    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
  }

  @Test
  void aPodWithoutKvguardsLabelsIsAdmittedWithoutAPatch() throws Exception {
    JsonNode response =
        JSON.readTree(
                new AdmissionHandler(namespace -> List.of(), new SimpleMeterRegistry())
                    .apply(podCreate("\"app\":\"glm\"").getBytes(StandardCharsets.UTF_8)))
            .path("response");

    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
  }
}

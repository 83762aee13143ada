package io.kvguard.gate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The parsed annotations VerdictRecords remembers (weak keys, the annotation text): what it shares
 * is immutable, and a tenant's annotation cannot make it hold far more than the pod itself.
 */
class VerdictRecordsMemoTest {
  private static Pod pod(String annotation) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("serve-0")
        .addToAnnotations(GateNames.VERDICTS_ANNOTATION, annotation)
        .endMetadata()
        .build();
  }

  /** A 250 KB annotation of empty records ({@code "0":{},"1":{},...}): 27,926 of them. */
  private static String emptyRecords(String first) {
    StringBuilder json = new StringBuilder("{\"").append(first).append("\":{}");
    for (int i = 0; json.length() < 250_000; i++) {
      json.append(",\"").append(Integer.toString(i, 36)).append("\":{}");
    }
    return json.append('}').toString();
  }

  @Test
  void anOrdinaryAnnotationIsParsedOnceAndSharedImmutable() {
    Pod pod = pod("{\"glm\":{\"verdict\":\"Verified\",\"restartCount\":0}}");
    Map<String, VerdictRecord> first = VerdictRecords.of(pod);
    assertThat(VerdictRecords.of(pod)).isSameAs(first);
    assertThat(first.get("glm").verdict()).isEqualTo("Verified");
    assertThatThrownBy(() -> first.put("other", null))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> first.keySet().clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void anAnnotationOfThousandsOfRecordsIsNotHeldOnceRead() {
    // Parsed, 250 KB of "x":{} is 3.5 MB of TreeMap entries and records (14 times the text):
    // remembered for every such pod, a tenant's 1,000 pods would hold 3.4 GB of the heap.
    Pod pod = pod(emptyRecords("pod-0"));
    Map<String, VerdictRecord> first = VerdictRecords.of(pod);
    assertThat(first).hasSizeGreaterThan(20_000);
    assertThat(VerdictRecords.of(pod)).isNotSameAs(first).isEqualTo(first);
  }
}

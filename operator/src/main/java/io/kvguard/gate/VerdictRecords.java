package io.kvguard.gate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@value GateNames#VERDICTS_ANNOTATION} annotation: a JSON object from ModelDeployment name to
 * its {@link VerdictRecord}. An annotation that cannot be read counts as none (fail closed: nothing
 * is carried over from it, and the next write replaces it).
 */
public final class VerdictRecords {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final TypeReference<TreeMap<String, VerdictRecord>> TYPE =
      new TypeReference<>() {};

  /**
   * Each annotation text read, with what it says, while some pod still holds that text. A pass
   * reads a pod's records several times (its index keys, the records it trusts, the patch it plans,
   * the stranded-pod count) and the same pod object is read by many passes: parsing each time was a
   * twentieth of the operator's CPU at start-up (issue 28 §5). Weak keys: an entry lasts as long as
   * a pod object that holds the text, so the memory is that of the pods the cache keeps, however
   * large a tenant makes the annotation. What is kept is immutable.
   *
   * <p>Only annotations of at most {@value #REMEMBERED_RECORDS} records are kept: what is parsed is
   * far larger than its text (a TreeMap entry and a record per {@code "x":{}}, 14 times the text at
   * 256 KiB: 3.5 MiB a pod), so a tenant filling their pods' annotations with empty records would
   * hold gigabytes of the operator's heap for as long as the pods live. A pod carries one record
   * per policy that gated it; a larger annotation is parsed on each read, as before the memo.
   */
  private static final Map<String, Map<String, VerdictRecord>> READ =
      Collections.synchronizedMap(new java.util.WeakHashMap<>());

  /** The most records an annotation may hold and still be remembered once parsed. */
  static final int REMEMBERED_RECORDS = 16;

  private VerdictRecords() {}

  /**
   * Every ModelDeployment's record on the pod, by name (sorted); empty when there is none or it is
   * unreadable.
   */
  public static Map<String, VerdictRecord> of(Pod pod) {
    String json = annotation(pod);
    if (json == null || json.isBlank()) {
      return Map.of();
    }
    Map<String, VerdictRecord> known = READ.get(json);
    if (known != null) {
      return known;
    }
    Map<String, VerdictRecord> read = parse(json);
    if (read.size() <= REMEMBERED_RECORDS) {
      READ.put(json, read);
    }
    return read;
  }

  private static Map<String, VerdictRecord> parse(String json) {
    try {
      Map<String, VerdictRecord> records = MAPPER.readValue(json, TYPE);
      return records == null ? Map.of() : Collections.unmodifiableMap(records);
    } catch (JsonProcessingException | IllegalArgumentException e) {
      return Map.of();
    }
  }

  /** This ModelDeployment's record on the pod, or null. */
  public static VerdictRecord of(Pod pod, String modelDeployment) {
    return of(pod).get(modelDeployment);
  }

  static String annotation(Pod pod) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(GateNames.VERDICTS_ANNOTATION);
  }

  /** The annotation's value for these records (names sorted, so equal records give equal text). */
  static String write(Map<String, VerdictRecord> records) {
    try {
      return MAPPER.writeValueAsString(new TreeMap<>(records));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise verdict records", e);
    }
  }
}

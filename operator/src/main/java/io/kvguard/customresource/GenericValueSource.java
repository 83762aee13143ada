package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;
import java.util.TreeMap;

/** One token count: a JSON value or a Prometheus sample, times a whole multiplier. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.jsonPointer) != has(self.metric)",
    message = "set exactly one of jsonPointer or metric")
@ValidationRule(
    value = "!has(self.labels) || has(self.metric)",
    message = "labels select Prometheus series: they need metric")
public class GenericValueSource {
  @Size(max = SchemaBounds.HTTP_PATH)
  @Pattern(GenericProbeSpec.PATH_PATTERN)
  @JsonPropertyDescription("Overrides the generic path for this figure.")
  private String path;

  @Size(max = SchemaBounds.JSON_POINTER)
  @Pattern("^(/([^~/]|~[01])*)+$")
  @JsonPropertyDescription(
      "RFC 6901 JSON pointer to a whole positive number in the JSON answer, e.g. /kv/capacity_tokens.")
  private String jsonPointer;

  @Size(max = SchemaBounds.METRIC_NAME)
  @Pattern("^[a-zA-Z_:][a-zA-Z0-9_:]*$")
  @JsonPropertyDescription(
      "Prometheus metric name in a text-format answer; its sample value is read.")
  private String metric;

  @JsonPropertyDescription(
      "Label values a series must carry (exact match). For the pool, the smallest matching"
          + " series counts (one per rank); for the engine context exactly one series must match. A label name"
          + " no series carries matches nothing, and the probe fails.")
  @Size(max = SchemaBounds.METRIC_LABELS)
  private Map<String, @Size(max = SchemaBounds.METRIC_LABEL_VALUE) String> labels;

  @Min(1)
  @Max(SchemaBounds.TOKENS)
  @Default("1")
  @JsonPropertyDescription(
      "Whole number the value is multiplied by, e.g. the block size when the engine reports blocks.")
  private Long multiplier = 1L;

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public String getJsonPointer() {
    return jsonPointer;
  }

  public void setJsonPointer(String jsonPointer) {
    this.jsonPointer = jsonPointer;
  }

  public String getMetric() {
    return metric;
  }

  public void setMetric(String metric) {
    this.metric = metric;
  }

  public Map<String, String> getLabels() {
    return labels;
  }

  public void setLabels(Map<String, String> labels) {
    this.labels = labels;
  }

  public Long getMultiplier() {
    return multiplier;
  }

  public void setMultiplier(Long multiplier) {
    this.multiplier = multiplier;
  }

  public long effectiveMultiplier() {
    return multiplier == null ? 1L : multiplier;
  }

  public Map<String, String> effectiveLabels() {
    return labels == null ? Map.of() : labels;
  }

  String fingerprint() {
    return "path="
        + path
        + ",jsonPointer="
        + jsonPointer
        + ",metric="
        + metric
        + ",labels="
        + new TreeMap<>(effectiveLabels())
        + ",multiplier="
        + effectiveMultiplier();
  }
}

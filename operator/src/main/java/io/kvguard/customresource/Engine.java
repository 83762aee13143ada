package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The inference engine a role runs; each value has exactly one probe. */
public enum Engine {
  @JsonProperty("sglang")
  SGLANG("sglang"),
  @JsonProperty("vllm")
  VLLM("vllm");

  private final String wireName;

  Engine(String wireName) {
    this.wireName = wireName;
  }

  /** The name users write in YAML and see in metrics. */
  public String wireName() {
    return wireName;
  }
}

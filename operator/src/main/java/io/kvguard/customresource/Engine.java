package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The inference engine a role runs; each value has exactly one probe (docs/engines.md). */
public enum Engine {
  @JsonProperty("sglang")
  SGLANG("sglang", true),
  @JsonProperty("vllm")
  VLLM("vllm", true),
  @JsonProperty("tgi")
  TGI("tgi", true),
  @JsonProperty("trtllm")
  TRTLLM("trtllm", true),
  @JsonProperty("llamacpp")
  LLAMACPP("llamacpp", true),
  /** Exposes no KV pool: only the loaded model's context length is judged. */
  @JsonProperty("ollama")
  OLLAMA("ollama", false),
  /** Any other engine, read where the role's {@code generic} settings say. */
  @JsonProperty("generic")
  GENERIC("generic", true);

  private final String wireName;
  private final boolean exposesKvPool;

  Engine(String wireName, boolean exposesKvPool) {
    this.wireName = wireName;
    this.exposesKvPool = exposesKvPool;
  }

  /** The name users write in YAML and see in metrics. */
  public String wireName() {
    return wireName;
  }

  /** False for engines whose only bound is their context length; their verdicts say so. */
  public boolean exposesKvPool() {
    return exposesKvPool;
  }
}

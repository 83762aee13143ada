package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;

@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "self.engine == 'generic' ? has(self.generic) : !has(self.generic)",
    message = "generic is required when engine is generic, and allowed only then")
@ValidationRule(
    value = "!has(self.blockCountIsPool) || self.engine == 'trtllm' || self.engine == 'vllm'",
    message = "blockCountIsPool applies to engines trtllm and vllm only")
public class RoleSpec {
  /** A release version as {@link io.kvguard.verdict.EngineVersion} reads one. */
  static final String RELEASE_VERSION_PATTERN =
      "^v?[0-9]{1,9}(\\.[0-9]{1,9}){0,3}(\\.post[0-9]{1,9})?$";

  @Required
  @Size(max = SchemaBounds.ROLE_NAME)
  @Pattern("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
  @JsonPropertyDescription("Role name, e.g. prefill, decode or serve (a DNS label).")
  private String name;

  @Required
  @JsonPropertyDescription("Label selector of the role's pods, in the ModelDeployment's namespace.")
  private LabelSelector selector;

  @Required
  @JsonPropertyDescription("The engine the role's pods run; it decides where the KV pool is read.")
  private Engine engine;

  @Required
  @JsonPropertyDescription(
      "The engine's container port, by number or name (resolved per pod like a Service targetPort).")
  private IntOrString port;

  @JsonPropertyDescription(
      "Where the engine serves its metrics, when not on port: a number, or the name of a port the"
          + " engine container declares (Triton: its metrics port, 8002 by default). Every probe that reads a metrics page"
          + " (vllm, tgi, trtllm, a generic metric source) reads it here; the other reads and the rejection probe use port.")
  private IntOrString metricsPort;

  @JsonPropertyDescription(
      "Declare that the engine's exported KV block count × block size is its GPU pool for one"
          + " prompt, so kvguard may judge it as the pool. trtllm: host offload is off (kv_cache_config.host_cache_size, or"
          + " Triton's kv_cache_host_memory_bytes, unset or 0) and every layer has the same attention window"
          + " (max_attention_window unset or one value). vllm builds without kv_cache_size_tokens: the model has one"
          + " KV-cache group (no sliding-window, chunked-local-attention or Mamba layers). A wrong declaration opens gates"
          + " on a pool kvguard did not measure; an engine answer that contradicts it still keeps the gate shut.")
  private Boolean blockCountIsPool;

  @Default("http")
  @JsonPropertyDescription("http or https.")
  private Scheme scheme = Scheme.HTTP;

  @Min(0)
  @Max(SchemaBounds.MIN_READY_PODS)
  @Default("1")
  @JsonPropertyDescription("Verified pods this role needs before the model is Ready.")
  private Integer minReadyPods = 1;

  @Default("false")
  @JsonPropertyDescription(
      "Accept an engine whose own context length exceeds its KV pool. Unsafe: such an engine reaches its"
          + " over-pool rejection path; prefer fixing the engine's --context-length.")
  private Boolean allowEngineContextAbovePool = false;

  @Size(max = SchemaBounds.VERSION)
  @Pattern(RELEASE_VERSION_PATTERN)
  @JsonPropertyDescription(
      "Oldest engine release accepted, e.g. 0.5.22; older engines are refused (EngineVersionTooOld).")
  private String minEngineVersion;

  @Default("false")
  @JsonPropertyDescription(
      "Accept an engine whose version is absent or not a release (dev builds, llama.cpp build ids) where a version"
          + " rule (minEngineVersion, an advisory) needs it; otherwise such pods are refused (EngineVersionUnknown).")
  private Boolean allowUnknownVersions = false;

  @JsonPropertyDescription(
      "Where the generic probe reads the figures; required when engine is generic, and only then.")
  private GenericProbeSpec generic;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public LabelSelector getSelector() {
    return selector;
  }

  public void setSelector(LabelSelector selector) {
    this.selector = selector;
  }

  public Engine getEngine() {
    return engine;
  }

  public void setEngine(Engine engine) {
    this.engine = engine;
  }

  public IntOrString getPort() {
    return port;
  }

  public void setPort(IntOrString port) {
    this.port = port;
  }

  public IntOrString getMetricsPort() {
    return metricsPort;
  }

  public void setMetricsPort(IntOrString metricsPort) {
    this.metricsPort = metricsPort;
  }

  public Boolean getBlockCountIsPool() {
    return blockCountIsPool;
  }

  public void setBlockCountIsPool(Boolean blockCountIsPool) {
    this.blockCountIsPool = blockCountIsPool;
  }

  public boolean effectiveBlockCountIsPool() {
    return Boolean.TRUE.equals(blockCountIsPool);
  }

  public Scheme getScheme() {
    return scheme;
  }

  public void setScheme(Scheme scheme) {
    this.scheme = scheme;
  }

  public Integer getMinReadyPods() {
    return minReadyPods;
  }

  public void setMinReadyPods(Integer minReadyPods) {
    this.minReadyPods = minReadyPods;
  }

  public Boolean getAllowEngineContextAbovePool() {
    return allowEngineContextAbovePool;
  }

  public void setAllowEngineContextAbovePool(Boolean allowEngineContextAbovePool) {
    this.allowEngineContextAbovePool = allowEngineContextAbovePool;
  }

  public String getMinEngineVersion() {
    return minEngineVersion;
  }

  public void setMinEngineVersion(String minEngineVersion) {
    this.minEngineVersion = minEngineVersion;
  }

  public Boolean getAllowUnknownVersions() {
    return allowUnknownVersions;
  }

  public void setAllowUnknownVersions(Boolean allowUnknownVersions) {
    this.allowUnknownVersions = allowUnknownVersions;
  }

  public GenericProbeSpec getGeneric() {
    return generic;
  }

  public void setGeneric(GenericProbeSpec generic) {
    this.generic = generic;
  }

  public boolean effectiveAllowUnknownVersions() {
    return Boolean.TRUE.equals(allowUnknownVersions);
  }

  public Scheme effectiveScheme() {
    return scheme == null ? Scheme.HTTP : scheme;
  }

  public int effectiveMinReadyPods() {
    return minReadyPods == null ? 1 : minReadyPods;
  }

  public boolean effectiveAllowEngineContextAbovePool() {
    return Boolean.TRUE.equals(allowEngineContextAbovePool);
  }
}

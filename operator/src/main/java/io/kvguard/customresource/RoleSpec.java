package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
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
public class RoleSpec {
  /** A release version as {@link io.kvguard.verdict.EngineVersion} reads one. */
  static final String RELEASE_VERSION_PATTERN = "^v?[0-9]{1,9}(\\.[0-9]{1,9}){0,3}(\\.post[0-9]{1,9})?$";

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
  @ValidationRule(
      value = "type(self) == int ? (self >= 1 && self <= 65535) : self.matches('^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$')",
      message = "port must be a number in 1-65535 or a container port name (IANA_SVC_NAME)")
  @JsonPropertyDescription("The engine's container port, by number or name (resolved per pod like a Service targetPort).")
  private IntOrString port;

  @Default("http")
  @JsonPropertyDescription("http or https.")
  private Scheme scheme = Scheme.HTTP;

  @Min(0)
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
  @JsonPropertyDescription("Oldest engine release accepted, e.g. 0.5.22; older engines are refused (EngineVersionTooOld).")
  private String minEngineVersion;

  @Default("false")
  @JsonPropertyDescription(
      "Accept an engine whose version is absent or not a release (dev builds, llama.cpp build ids) where a version"
          + " rule (minEngineVersion, an advisory) needs it; otherwise such pods are refused (EngineVersionUnknown).")
  private Boolean allowUnknownVersions = false;

  @JsonPropertyDescription("Where the generic probe reads the figures; required when engine is generic, and only then.")
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

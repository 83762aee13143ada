package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** Where the generic probe reads an engine's figures: one HTTP path, and a source per figure. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GenericProbeSpec {
  /** An absolute path on the engine; never "//", which would name another host. */
  static final String PATH_PATTERN =
      "^/([A-Za-z0-9._~!$&'()*+,;=:@%-][A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$";

  @Required
  @Size(max = SchemaBounds.HTTP_PATH)
  @Pattern(PATH_PATTERN)
  @JsonPropertyDescription(
      "HTTP path (GET) the figures are read from, e.g. /metrics or /stats; a source may override it.")
  private String path;

  @Required
  @JsonPropertyDescription(
      "The KV pool in tokens: a JSON pointer or a Prometheus metric, times multiplier.")
  private GenericValueSource pool;

  @JsonPropertyDescription(
      "The longest prompt the engine admits, in tokens (optional; without it"
          + " EngineContextExceedsPool is not checked).")
  private GenericValueSource engineContext;

  @JsonPropertyDescription("The engine's version string (optional; needed by minEngineVersion).")
  private GenericVersionSource version;

  public String getPath() {
    return path;
  }

  public void setPath(String path) {
    this.path = path;
  }

  public GenericValueSource getPool() {
    return pool;
  }

  public void setPool(GenericValueSource pool) {
    this.pool = pool;
  }

  public GenericValueSource getEngineContext() {
    return engineContext;
  }

  public void setEngineContext(GenericValueSource engineContext) {
    this.engineContext = engineContext;
  }

  public GenericVersionSource getVersion() {
    return version;
  }

  public void setVersion(GenericVersionSource version) {
    this.version = version;
  }

  /** Everything that decides what the probe reads; a change makes earlier probe answers stale. */
  public String fingerprint() {
    return "path="
        + path
        + ";pool="
        + (pool == null ? "-" : pool.fingerprint())
        + ";engineContext="
        + (engineContext == null ? "-" : engineContext.fingerprint())
        + ";version="
        + (version == null ? "-" : version.fingerprint());
  }
}

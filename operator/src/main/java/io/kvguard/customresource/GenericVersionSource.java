package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * Where the generic probe reads the engine's version: a JSON string (or number) in a JSON answer.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class GenericVersionSource {
  @Size(max = SchemaBounds.HTTP_PATH)
  @Pattern(GenericProbeSpec.PATH_PATTERN)
  @JsonPropertyDescription("Overrides the generic path for the version.")
  private String path;

  @Required
  @Size(max = SchemaBounds.JSON_POINTER)
  @Pattern("^(/([^~/]|~[01])*)+$")
  @JsonPropertyDescription("RFC 6901 JSON pointer to the version, e.g. /version.")
  private String jsonPointer;

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

  String fingerprint() {
    return "path=" + path + ",jsonPointer=" + jsonPointer;
  }
}

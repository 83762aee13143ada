package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A key of a Secret in the ModelDeployment's own namespace. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SecretKeyRef {
  @Required
  @Size(max = SchemaBounds.SECRET_NAME)
  @Pattern("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
  @JsonPropertyDescription("Name of the Secret, in the ModelDeployment's namespace.")
  private String name;

  @Size(max = SchemaBounds.SECRET_KEY)
  @Default("token")
  @JsonPropertyDescription("Key in the Secret whose value is the bearer token.")
  private String key = "token";

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public String effectiveKey() {
    return key == null || key.isBlank() ? "token" : key;
  }
}

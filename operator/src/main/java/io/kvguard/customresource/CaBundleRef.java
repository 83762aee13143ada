package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/**
 * A key of a Secret or ConfigMap in the ModelDeployment's own namespace holding PEM CA
 * certificates.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CaBundleRef {
  public static final String DEFAULT_KEY = "ca.crt";

  @Required
  @Size(max = SchemaBounds.SECRET_NAME)
  @Pattern("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
  @JsonPropertyDescription("Name of the Secret or ConfigMap, in the ModelDeployment's namespace.")
  private String name;

  @Size(max = SchemaBounds.SECRET_KEY)
  @Pattern("^[-._a-zA-Z0-9]+$")
  @Default(DEFAULT_KEY)
  @JsonPropertyDescription(
      "Key whose value is one or more PEM certificates (the CA bundle). ca.crt is where"
          + " cert-manager, kubernetes.io/tls Secrets and the kube-root-ca.crt ConfigMap keep it.")
  private String key = DEFAULT_KEY;

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
    return key == null || key.isBlank() ? DEFAULT_KEY : key;
  }
}

package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * How probes verify an engine that speaks https: whom to trust and which name the certificate must
 * carry. There is deliberately no way to skip verification: an engine whose certificate cannot be
 * verified is not probed.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "!(has(self.caSecretRef) && has(self.caConfigMapRef))",
    message = "set at most one of caSecretRef and caConfigMapRef")
public class ProbeTlsSpec {
  @JsonPropertyDescription(
      "CA bundle (PEM) from a key of a Secret; the probes then trust these CAs only, not the"
          + " JVM's. The operator needs get on that Secret (Helm value probeTls.secretNames).")
  private CaBundleRef caSecretRef;

  @JsonPropertyDescription(
      "CA bundle (PEM) from a key of a ConfigMap (e.g. one trust-manager fills); the probes then"
          + " trust these CAs only, not the JVM's. The operator needs get on that ConfigMap (Helm value"
          + " probeTls.configMapNames).")
  private CaBundleRef caConfigMapRef;

  @Size(max = SchemaBounds.SERVER_NAME)
  @Pattern("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$")
  @JsonPropertyDescription(
      "DNS name the engine's certificate must carry (a dNSName subjectAltName), checked instead of"
          + " the pod IP the probe connects to, and sent as SNI where the JVM allows it; e.g. the engine Service's name."
          + " Without it the certificate must name the pod IP.")
  private String serverName;

  public CaBundleRef getCaSecretRef() {
    return caSecretRef;
  }

  public void setCaSecretRef(CaBundleRef caSecretRef) {
    this.caSecretRef = caSecretRef;
  }

  public CaBundleRef getCaConfigMapRef() {
    return caConfigMapRef;
  }

  public void setCaConfigMapRef(CaBundleRef caConfigMapRef) {
    this.caConfigMapRef = caConfigMapRef;
  }

  public String getServerName() {
    return serverName;
  }

  public void setServerName(String serverName) {
    this.serverName = serverName;
  }
}

package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class ProbeSpec {
  @Min(1)
  @Max(86400)
  @Default("60")
  @JsonPropertyDescription(
      "Seconds between re-probes of an unchanged engine process. A re-probe may run up to a tenth of this (at most 1 s) early, so one pass re-probes the pods whose turn is near.")
  private Integer periodSeconds = 60;

  @Min(1)
  @Max(300)
  @Default("5")
  @JsonPropertyDescription("Seconds one probe may take, all of its requests and answers included.")
  private Integer timeoutSeconds = 5;

  @JsonPropertyDescription(
      "Bearer token for engines that require one, from a Secret; sent only to this"
          + " ModelDeployment's engines and never logged. The operator needs get on that Secret (Helm value"
          + " probeCredentials.secretNames).")
  private SecretKeyRef authSecretRef;

  @JsonPropertyDescription(
      "How to verify engines reached over https (roles with scheme: https): a CA bundle from a"
          + " Secret or ConfigMap and the name the certificate must carry. Without it the JVM's default trust store"
          + " and the pod IP are used, which no certificate of a private CA or for a Service name passes.")
  private ProbeTlsSpec tls;

  public ProbeTlsSpec getTls() {
    return tls;
  }

  public void setTls(ProbeTlsSpec tls) {
    this.tls = tls;
  }

  public SecretKeyRef getAuthSecretRef() {
    return authSecretRef;
  }

  public void setAuthSecretRef(SecretKeyRef authSecretRef) {
    this.authSecretRef = authSecretRef;
  }

  public Integer getPeriodSeconds() {
    return periodSeconds;
  }

  public void setPeriodSeconds(Integer periodSeconds) {
    this.periodSeconds = periodSeconds;
  }

  public Integer getTimeoutSeconds() {
    return timeoutSeconds;
  }

  public void setTimeoutSeconds(Integer timeoutSeconds) {
    this.timeoutSeconds = timeoutSeconds;
  }

  public int effectivePeriodSeconds() {
    return periodSeconds == null ? 60 : periodSeconds;
  }

  public int effectiveTimeoutSeconds() {
    return timeoutSeconds == null ? 5 : timeoutSeconds;
  }
}

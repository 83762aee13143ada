package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Optional;

/**
 * The Service in front of a prefill/decode model's roles (its router, e.g. sgl-model-gateway), in
 * the ModelDeployment's namespace: the rejection probe sends its prompts there, where the router
 * adds the bootstrap fields a prefill or decode server needs, so the path that failed in the
 * incident is reached (issue 26 §2). Plain HTTP: the probe reaches it inside the cluster at {@code
 * http://<the Service's cluster IP>:<port>}, read just before each proof ({@code
 * reconciler.RouterServices}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RejectionRouterSpec {
  /** Kubernetes' DNS-1035 label, the rule for a Service name. */
  static final String DNS_1035_LABEL = "^[a-z]([-a-z0-9]*[a-z0-9])?$";

  @Required
  @Size(max = SchemaBounds.SERVICE_NAME)
  @Pattern(DNS_1035_LABEL)
  @JsonPropertyDescription(
      "Name of the Service in front of the prefill and decode roles (the router), in the"
          + " ModelDeployment's namespace.")
  private String service;

  @Required
  @Min(1)
  @Max(65535)
  @JsonPropertyDescription("The Service's port the router answers on (plain HTTP).")
  private Integer port;

  @JsonPropertyDescription(
      "true: the Service is a dedicated proof router (sgl-model-gateway in PD mode, started with"
          + " no workers and no service discovery), and kvguard adds the prefill and decode pods to"
          + " it through its worker API (POST /workers) for each proof and removes them afterwards,"
          + " so the pods are proven while their readiness gates keep them out of the production"
          + " router. false or absent: the router already lists the workers itself.")
  private Boolean registerWorkers;

  public String getService() {
    return service;
  }

  public void setService(String service) {
    this.service = service;
  }

  public Integer getPort() {
    return port;
  }

  public void setPort(Integer port) {
    this.port = port;
  }

  public Boolean getRegisterWorkers() {
    return registerWorkers;
  }

  public void setRegisterWorkers(Boolean registerWorkers) {
    this.registerWorkers = registerWorkers;
  }

  /** Whether kvguard adds the pods to the router for each proof (absent: no). */
  public boolean effectiveRegisterWorkers() {
    return Boolean.TRUE.equals(registerWorkers);
  }

  /**
   * Why this router cannot be used, in the words the operator shows (a CRD older than the operator
   * lets such a value through); empty if it can.
   */
  public Optional<String> problem() {
    if (service == null
        || service.length() > SchemaBounds.SERVICE_NAME
        || !service.matches(DNS_1035_LABEL)) {
      return Optional.of(
          "spec.rejectionProbe.router.service must be a Service name (a DNS-1035 label of at most "
              + SchemaBounds.SERVICE_NAME
              + " characters: lower-case letters, digits and '-', starting with a letter)");
    }
    if (port == null || port < 1 || port > 65535) {
      return Optional.of("spec.rejectionProbe.router.port must be 1-65535");
    }
    return Optional.empty();
  }
}

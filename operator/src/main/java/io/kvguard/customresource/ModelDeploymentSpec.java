package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelDeploymentSpec {
  @Required
  @Size(min = 1, max = SchemaBounds.MODEL)
  @JsonPropertyDescription("The served model's name, as clients address it.")
  private String model;

  @Required
  @Min(1)
  @Max(SchemaBounds.TOKENS)
  @JsonPropertyDescription("Context window in tokens that the service promises its clients.")
  private Long contextWindow;

  @Min(1.0)
  @Max(SchemaBounds.POOL_RATIO)
  @Default("1.0")
  @JsonPropertyDescription("A pod passes only if its KV pool >= contextWindow x minPoolRatio.")
  private Double minPoolRatio = 1.0;

  @Default("Enforce")
  @JsonPropertyDescription(
      "Enforce gates traffic; Audit reports violations but opens every gate (reason Audit).")
  private Enforcement enforcement = Enforcement.Enforce;

  @Default("Enabled")
  @JsonPropertyDescription(
      "Enabled refuses pods whose engine build has a known flaw (reason KnownUnsafeEngine,"
          + " docs/engines.md lists the advisories); Disabled turns the advisories off for this ModelDeployment.")
  private AdvisoryMode engineAdvisories = AdvisoryMode.Enabled;

  @Required
  @Size(min = 1, max = SchemaBounds.ROLES)
  @JsonPropertyDescription(
      "The pod roles that serve the model (e.g. prefill, decode, serve); role names are unique.")
  private List<RoleSpec> roles = new ArrayList<>();

  @JsonPropertyDescription("How often and how patiently engines are probed.")
  private ProbeSpec probe;

  @JsonPropertyDescription(
      "Prove the rejection path: after a pod's pool passed, a prompt just above the engine's"
          + " admission limit must be refused (off by default).")
  private RejectionProbeSpec rejectionProbe;

  @JsonPropertyDescription("What kvguard publishes to routers beyond the gate.")
  private RoutingSpec routing;

  /** Set only on the stand-in for a stored spec kvguard could not read (see {@link #standIn}). */
  @JsonIgnore private Unreadable unreadable;

  /**
   * What takes the place of a stored spec kvguard cannot read: it says nothing but the failure
   * (every field empty, so it selects no pod and no default opens anything), and the reconciler
   * treats it as a spec it cannot apply.
   */
  static ModelDeploymentSpec standIn(Unreadable failure) {
    ModelDeploymentSpec spec = new ModelDeploymentSpec();
    spec.minPoolRatio = null;
    spec.enforcement = null;
    spec.engineAdvisories = null;
    spec.unreadable = failure;
    return spec;
  }

  /** Why the stored spec could not be read; empty for every spec that was. */
  public Optional<Unreadable> unreadable() {
    return Optional.ofNullable(unreadable);
  }

  public RoutingSpec getRouting() {
    return routing;
  }

  public void setRouting(RoutingSpec routing) {
    this.routing = routing;
  }

  /**
   * Whether verified pods get the context-length label (spec.routing.publishContextLengthLabel).
   */
  public boolean publishesContextLength() {
    return routing != null && Boolean.TRUE.equals(routing.getPublishContextLengthLabel());
  }

  public RejectionProbeSpec getRejectionProbe() {
    return rejectionProbe;
  }

  public void setRejectionProbe(RejectionProbeSpec rejectionProbe) {
    this.rejectionProbe = rejectionProbe;
  }

  public RejectionProbeSpec effectiveRejectionProbe() {
    return rejectionProbe == null ? new RejectionProbeSpec() : rejectionProbe;
  }

  public String getModel() {
    return model;
  }

  public void setModel(String model) {
    this.model = model;
  }

  public Long getContextWindow() {
    return contextWindow;
  }

  public void setContextWindow(Long contextWindow) {
    this.contextWindow = contextWindow;
  }

  public Double getMinPoolRatio() {
    return minPoolRatio;
  }

  public void setMinPoolRatio(Double minPoolRatio) {
    this.minPoolRatio = minPoolRatio;
  }

  public Enforcement getEnforcement() {
    return enforcement;
  }

  public void setEnforcement(Enforcement enforcement) {
    this.enforcement = enforcement;
  }

  public AdvisoryMode getEngineAdvisories() {
    return engineAdvisories;
  }

  public void setEngineAdvisories(AdvisoryMode engineAdvisories) {
    this.engineAdvisories = engineAdvisories;
  }

  public List<RoleSpec> getRoles() {
    return roles;
  }

  public void setRoles(List<RoleSpec> roles) {
    this.roles = roles;
  }

  public ProbeSpec getProbe() {
    return probe;
  }

  public void setProbe(ProbeSpec probe) {
    this.probe = probe;
  }

  /** The probe settings with defaults applied when the field was omitted. */
  public ProbeSpec effectiveProbe() {
    return probe == null ? new ProbeSpec() : probe;
  }

  public double effectiveMinPoolRatio() {
    return minPoolRatio == null ? 1.0 : minPoolRatio;
  }

  public boolean effectiveEngineAdvisories() {
    return engineAdvisories != AdvisoryMode.Disabled;
  }

  public Enforcement effectiveEnforcement() {
    return enforcement == null ? Enforcement.Enforce : enforcement;
  }
}

package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Size;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What kvguard last concluded; written only when a field in it changes. Its size is bounded at any
 * pod count (etcd refuses objects over 1.5 MiB): pods are counted per role and reason, and at most
 * {@value #MAX_LISTED_PODS} are listed.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelDeploymentStatus {
  /** Pods listed in {@link #pods}. */
  public static final int MAX_LISTED_PODS = 50;

  /** Set only on the stand-in for a stored status kvguard could not read. */
  @JsonIgnore private Unreadable unreadable;

  /**
   * What takes the place of a stored status kvguard cannot read: an empty status (nothing
   * concluded, no pod listed), which the next pass replaces with its own; the pods' signed records
   * still say what kvguard last decided about each.
   */
  static ModelDeploymentStatus standIn(Unreadable failure) {
    ModelDeploymentStatus status = new ModelDeploymentStatus();
    status.unreadable = failure;
    return status;
  }

  /** Why the stored status could not be read; empty for every status that was. */
  public Optional<Unreadable> unreadable() {
    return Optional.ofNullable(unreadable);
  }

  @JsonPropertyDescription("The spec generation these conclusions are based on.")
  @Max(SchemaBounds.LONG)
  public Long observedGeneration;

  @JsonPropertyDescription("Verified pods out of selected pods, e.g. 6/8.")
  public String verified;

  @JsonPropertyDescription(
      "Ready, PoolsVerified (and InvalidSpec when the spec cannot be applied).")
  public List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription(
      "Per role: pods selected, pods verified, pods per reason, smallest pool seen.")
  public List<RoleStatus> roles = new ArrayList<>();

  @JsonPropertyDescription(
      "Selected pods with their last verdict and the numbers behind it: all of them up to 50;"
          + " beyond that the 50 most pressing (refused, failed, awaiting a probe, verified without the"
          + " readiness gate, then verified), by name.")
  @Size(max = MAX_LISTED_PODS)
  public List<PodVerdictStatus> pods = new ArrayList<>();

  @JsonPropertyDescription(
      "Selected pods not listed in pods (absent when every pod is listed); roles[].podsByReason"
          + " counts every pod.")
  @Max(SchemaBounds.INT)
  public Integer podsNotListed;

  @JsonPropertyDescription(
      "Selected pods whose spec lacks the kvguard.io/pool-verified readiness gate (absent when"
          + " none): only the kvguard.io/verified label holds them back. roles[].notes names them; a rollout restart"
          + " recreates them with the gate where the webhook is on.")
  @Max(SchemaBounds.INT)
  public Integer labelOnlyPods;

  @JsonPropertyDescription(
      "The proof of the prefill/decode pods through spec.rejectionProbe.router (absent without a"
          + " router, or before any prefill/decode pod passed its pool check).")
  public RouterProofStatus routerProof;
}

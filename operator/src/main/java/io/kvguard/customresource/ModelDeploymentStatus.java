package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What kvguard last concluded; written only when a field in it changes. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelDeploymentStatus {
  @JsonPropertyDescription("The spec generation these conclusions are based on.")
  public Long observedGeneration;

  @JsonPropertyDescription("Verified pods out of selected pods, e.g. 6/8.")
  public String verified;

  @JsonPropertyDescription("Ready, PoolsVerified (and InvalidSpec when the spec cannot be applied).")
  public List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("Per role: pods selected, pods verified, smallest pool seen.")
  public List<RoleStatus> roles = new ArrayList<>();

  @JsonPropertyDescription("Per selected pod: the last verdict and the numbers behind it.")
  public List<PodVerdictStatus> pods = new ArrayList<>();
}

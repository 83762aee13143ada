package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** The over-capacity request sent once per engine container after its pool passed. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RejectionProbeSpec {
  @Default("false")
  @JsonPropertyDescription(
      "Send one prompt per admission path of the engine, each of its check's exact length, and"
          + " require each check's own refusal.")
  private Boolean enabled = false;

  @Min(1)
  @Max(1048576)
  @Default("1")
  @JsonPropertyDescription(
      "Keys the probe (min(pool, engine context) + marginTokens): changing it sends the prompts"
          + " again. The lengths sent come from the engine's admission paths.")
  private Long marginTokens = 1L;

  @Min(1)
  @Max(600)
  @Default("30")
  @JsonPropertyDescription(
      "Seconds the engine has to refuse; no answer in time fails the probe (ProbeFailed).")
  private Integer timeoutSeconds = 30;

  @JsonPropertyDescription(
      "The Service in front of a prefill/decode model's roles: its prefill and decode pods are"
          + " proven through it (their own ports refuse any prompt without the router's bootstrap"
          + " fields). Without it, prefill and decode pods stay unproven.")
  private RejectionRouterSpec router;

  public Boolean getEnabled() {
    return enabled;
  }

  public void setEnabled(Boolean enabled) {
    this.enabled = enabled;
  }

  public Long getMarginTokens() {
    return marginTokens;
  }

  public void setMarginTokens(Long marginTokens) {
    this.marginTokens = marginTokens;
  }

  public Integer getTimeoutSeconds() {
    return timeoutSeconds;
  }

  public void setTimeoutSeconds(Integer timeoutSeconds) {
    this.timeoutSeconds = timeoutSeconds;
  }

  public RejectionRouterSpec getRouter() {
    return router;
  }

  public void setRouter(RejectionRouterSpec router) {
    this.router = router;
  }

  public boolean effectiveEnabled() {
    return Boolean.TRUE.equals(enabled);
  }

  public long effectiveMarginTokens() {
    return marginTokens == null ? 1 : marginTokens;
  }

  public int effectiveTimeoutSeconds() {
    return timeoutSeconds == null ? 30 : timeoutSeconds;
  }
}

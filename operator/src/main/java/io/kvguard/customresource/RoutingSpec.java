package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;

/** What kvguard tells routers about verified pods beyond the gate (docs/routing.md). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RoutingSpec {
  @Default("false")
  @JsonPropertyDescription(
      "Label verified pods llm-d.ai/context-length-range: \"0-N\", N = min(measured pool, engine "
          + "context length), for llm-d's context-length-aware router plugin; removed from pods not verified.")
  private Boolean publishContextLengthLabel = false;

  public Boolean getPublishContextLengthLabel() {
    return publishContextLengthLabel;
  }

  public void setPublishContextLengthLabel(Boolean publishContextLengthLabel) {
    this.publishContextLengthLabel = publishContextLengthLabel;
  }
}

package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonProperty;

/** URL scheme used to reach an engine. */
public enum Scheme {
  @JsonProperty("http")
  HTTP,
  @JsonProperty("https")
  HTTPS;

  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}

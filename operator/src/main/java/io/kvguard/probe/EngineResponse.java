package io.kvguard.probe;

import java.nio.charset.StandardCharsets;

/** A complete, size-bounded answer from an engine. */
public record EngineResponse(String path, int status, String contentType, byte[] body) {

  public String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  public boolean isJson() {
    return contentType != null && contentType.toLowerCase(java.util.Locale.ROOT).contains("json");
  }

  /** Prometheus text exposition (text/plain; version=0.0.4) or OpenMetrics text. */
  public boolean isPrometheusText() {
    if (contentType == null) {
      return false;
    }
    String type = contentType.toLowerCase(java.util.Locale.ROOT);
    return type.startsWith("text/plain") || type.startsWith("application/openmetrics-text");
  }
}

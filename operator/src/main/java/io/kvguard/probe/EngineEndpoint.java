package io.kvguard.probe;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Where one engine process answers, and how patiently to ask it.
 *
 * @param baseUri scheme, host and port, e.g. http://10.0.0.7:30000
 * @param timeout the deadline of each request, body included
 * @param bearerToken sent as Authorization only to this endpoint; never logged
 * @param metricsBaseUri where the engine serves its metrics pages: the same as {@code baseUri} unless the role names
 *     a metricsPort (Triton serves them on its metrics port, 8002 by default, not on the inference port)
 */
public record EngineEndpoint(URI baseUri, Duration timeout, Optional<String> bearerToken, URI metricsBaseUri) {

  public EngineEndpoint {
    Objects.requireNonNull(baseUri, "baseUri");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(bearerToken, "bearerToken");
    Objects.requireNonNull(metricsBaseUri, "metricsBaseUri");
  }

  /** An engine that serves everything, metrics included, on one port. */
  public EngineEndpoint(URI baseUri, Duration timeout, Optional<String> bearerToken) {
    this(baseUri, timeout, bearerToken, baseUri);
  }

  public static EngineEndpoint of(String scheme, String host, int port, Duration timeout) {
    return new EngineEndpoint(uri(scheme, host, port), timeout, Optional.empty());
  }

  public EngineEndpoint withBearerToken(Optional<String> token) {
    return new EngineEndpoint(baseUri, timeout, token, metricsBaseUri);
  }

  /** The same engine, with its metrics served on another port of the same host. */
  public EngineEndpoint withMetricsPort(int port) {
    return new EngineEndpoint(baseUri, timeout, bearerToken,
        URI.create(baseUri.getScheme() + "://" + baseUri.getHost() + ":" + port));
  }

  /** The endpoint whose base is the metrics port: what a probe asks for a metrics page. */
  public EngineEndpoint metrics() {
    return new EngineEndpoint(metricsBaseUri, timeout, bearerToken, metricsBaseUri);
  }

  public URI resolve(String path) {
    return baseUri.resolve(path);
  }

  private static URI uri(String scheme, String host, int port) {
    String literal = host.contains(":") ? "[" + host + "]" : host;
    return URI.create(scheme + "://" + literal + ":" + port);
  }

  @Override
  public String toString() {
    // The token must never reach a log line through a record's default toString.
    return "EngineEndpoint[" + baseUri + (metricsBaseUri.equals(baseUri) ? "" : ", metrics " + metricsBaseUri)
        + ", timeout=" + timeout + (bearerToken.isPresent() ? ", bearer=***" : "") + "]";
  }
}

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
 */
public record EngineEndpoint(URI baseUri, Duration timeout, Optional<String> bearerToken) {

  public EngineEndpoint {
    Objects.requireNonNull(baseUri, "baseUri");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(bearerToken, "bearerToken");
  }

  public static EngineEndpoint of(String scheme, String host, int port, Duration timeout) {
    String literal = host.contains(":") ? "[" + host + "]" : host;
    return new EngineEndpoint(URI.create(scheme + "://" + literal + ":" + port), timeout, Optional.empty());
  }

  public EngineEndpoint withBearerToken(Optional<String> token) {
    return new EngineEndpoint(baseUri, timeout, token);
  }

  public URI resolve(String path) {
    return baseUri.resolve(path);
  }

  @Override
  public String toString() {
    // The token must never reach a log line through a record's default toString.
    return "EngineEndpoint[" + baseUri + ", timeout=" + timeout + (bearerToken.isPresent() ? ", bearer=***" : "") + "]";
  }
}

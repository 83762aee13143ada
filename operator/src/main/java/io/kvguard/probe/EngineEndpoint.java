package io.kvguard.probe;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where one engine process answers, and how patiently to ask it.
 *
 * @param baseUri scheme, host and port, e.g. http://10.0.0.7:30000
 * @param timeout how long one probe may take, every request and body included, once it started
 *     ({@link #startingNow()}); before that, the deadline of each request
 * @param bearerToken sent as Authorization only to this endpoint; never logged
 * @param metricsBaseUri where the engine serves its metrics pages: the same as {@code baseUri}
 *     unless the role names a metricsPort (Triton serves them on its metrics port, 8002 by default,
 *     not on the inference port)
 * @param tls how to verify an https engine's certificate (empty: the JVM's trust store, against the
 *     host); the same settings hold for the metrics port
 * @param deadlineNanos the {@link System#nanoTime()} by which the probe must be done, once it
 *     started
 */
public record EngineEndpoint(
    URI baseUri,
    Duration timeout,
    Optional<String> bearerToken,
    URI metricsBaseUri,
    Optional<EngineTls> tls,
    OptionalLong deadlineNanos) {

  public EngineEndpoint {
    Objects.requireNonNull(baseUri, "baseUri");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(bearerToken, "bearerToken");
    Objects.requireNonNull(metricsBaseUri, "metricsBaseUri");
    Objects.requireNonNull(tls, "tls");
    Objects.requireNonNull(deadlineNanos, "deadlineNanos");
  }

  public EngineEndpoint(
      URI baseUri,
      Duration timeout,
      Optional<String> bearerToken,
      URI metricsBaseUri,
      Optional<EngineTls> tls) {
    this(baseUri, timeout, bearerToken, metricsBaseUri, tls, OptionalLong.empty());
  }

  /** An engine that serves everything, metrics included, on one port. */
  public EngineEndpoint(URI baseUri, Duration timeout, Optional<String> bearerToken) {
    this(baseUri, timeout, bearerToken, baseUri, Optional.empty());
  }

  /**
   * The same endpoint for a probe that starts now: all of its requests share one deadline, {@code
   * timeout} from now, so a probe of several requests cannot take several timeouts.
   */
  public EngineEndpoint startingNow() {
    return withDeadline(System.nanoTime() + timeout.toNanos());
  }

  /**
   * As {@link #startingNow()}, but never past {@code notAfterNanos} (a {@link System#nanoTime()}
   * value): one step of a larger probe whose whole has a cap of its own (a proof through a router,
   * {@link PdRouterProbe#capOf}).
   */
  public EngineEndpoint startingNowNotAfter(long notAfterNanos) {
    long own = System.nanoTime() + timeout.toNanos();
    return withDeadline(own - notAfterNanos < 0 ? own : notAfterNanos);
  }

  private EngineEndpoint withDeadline(long deadlineNanos) {
    return new EngineEndpoint(
        baseUri, timeout, bearerToken, metricsBaseUri, tls, OptionalLong.of(deadlineNanos));
  }

  /**
   * Time left for the next request: the rest of the probe's deadline, or a whole timeout when it
   * has none.
   */
  long remainingNanos() {
    long whole = timeout.toNanos();
    return deadlineNanos.isPresent()
        ? Math.min(whole, deadlineNanos.getAsLong() - System.nanoTime())
        : whole;
  }

  public static EngineEndpoint of(String scheme, String host, int port, Duration timeout) {
    return new EngineEndpoint(uri(scheme, host, port), timeout, Optional.empty());
  }

  public EngineEndpoint withBearerToken(Optional<String> token) {
    return new EngineEndpoint(baseUri, timeout, token, metricsBaseUri, tls, deadlineNanos);
  }

  /** The same engine, with its metrics served on another port of the same host. */
  public EngineEndpoint withMetricsPort(int port) {
    return new EngineEndpoint(
        baseUri,
        timeout,
        bearerToken,
        URI.create(baseUri.getScheme() + "://" + baseUri.getHost() + ":" + port),
        tls,
        deadlineNanos);
  }

  /** The endpoint whose base is the metrics port: what a probe asks for a metrics page. */
  public EngineEndpoint metrics() {
    return new EngineEndpoint(
        metricsBaseUri, timeout, bearerToken, metricsBaseUri, tls, deadlineNanos);
  }

  public EngineEndpoint withTls(Optional<EngineTls> settings) {
    return new EngineEndpoint(
        baseUri, timeout, bearerToken, metricsBaseUri, settings, deadlineNanos);
  }

  public EngineEndpoint withTimeout(Duration deadline) {
    return new EngineEndpoint(
        baseUri, deadline, bearerToken, metricsBaseUri, tls, OptionalLong.empty());
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
    return "EngineEndpoint["
        + baseUri
        + (metricsBaseUri.equals(baseUri) ? "" : ", metrics " + metricsBaseUri)
        + ", timeout="
        + timeout
        + (bearerToken.isPresent() ? ", bearer=***" : "")
        + tls.map(t -> ", " + t).orElse("")
        + "]";
  }
}

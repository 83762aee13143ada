package io.kvguard.probe;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * The only way probes reach engines: GET, no redirects followed, one deadline covering headers and body, and
 * a hard cap on the bytes read so a hostile or broken engine cannot exhaust the operator's memory.
 */
public final class EngineHttp {
  public static final int DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

  /** Where GET answers come from: the network, or (for fuzzing and replaying captured answers) memory. */
  @FunctionalInterface
  public interface Exchange {
    EngineResponse get(EngineEndpoint endpoint, String path) throws ProbeException;
  }

  private final HttpClient client;
  private final TlsClients tlsClients = new TlsClients(java.time.Clock.systemUTC());
  private final int maxBodyBytes;
  private final Exchange exchange;

  /** @param client for engines without TLS settings (http, or https verified by the JVM's trust store) */
  public EngineHttp(HttpClient client, int maxBodyBytes) {
    this.client = client;
    this.maxBodyBytes = maxBodyBytes;
    this.exchange = this::sendGet;
  }

  private EngineHttp(Exchange exchange) {
    this.client = null;
    this.maxBodyBytes = 0;
    this.exchange = exchange;
  }

  /** Probes run against answers held in memory, with the same status and content-type checks as on the wire. */
  public static EngineHttp inMemory(Exchange exchange) {
    return new EngineHttp(exchange);
  }

  public static EngineHttp createDefault() {
    return new EngineHttp(newHttpClient(), DEFAULT_MAX_BODY_BYTES);
  }

  /**
   * The JDK client every probe uses: never follows redirects, HTTP/1.1, 5 s to connect. Idle connections are
   * closed after 5 s unless {@code -Djdk.httpclient.keepalive.timeout} says otherwise: a probe's requests reuse
   * one connection, but thousands of engines probed once a minute must not each hold a socket and buffers
   * (the JDK default keeps them 20 minutes).
   */
  public static HttpClient newHttpClient() {
    return newHttpClientBuilder().build();
  }

  /** The settings of {@link #newHttpClient()}, for clients that add their own TLS settings. */
  static HttpClient.Builder newHttpClientBuilder() {
    System.getProperties().putIfAbsent("jdk.httpclient.keepalive.timeout", "5");
    return HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(Duration.ofSeconds(5))
        .version(HttpClient.Version.HTTP_1_1);
  }

  /** GET {@code path}; any status is returned, transport failures become a {@link ProbeException}. */
  public EngineResponse get(EngineEndpoint endpoint, String path) throws ProbeException {
    return exchange.get(endpoint, path);
  }

  private EngineResponse sendGet(EngineEndpoint endpoint, String path) throws ProbeException {
    HttpRequest.Builder request = HttpRequest.newBuilder(endpoint.resolve(path))
        .timeout(endpoint.timeout())
        .header("Accept", "application/json, text/plain;q=0.9")
        .GET();
    return send(endpoint, request, "GET " + path, path);
  }

  /** POST a JSON body (the rejection probe); same deadline, cap and redirect rules as GET. */
  public EngineResponse postJson(EngineEndpoint endpoint, String path, byte[] json) throws ProbeException {
    if (client == null) {
      throw new ProbeException("POST " + path + " is not available on an in-memory exchange");
    }
    HttpRequest.Builder request = HttpRequest.newBuilder(endpoint.resolve(path))
        .timeout(endpoint.timeout())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .POST(HttpRequest.BodyPublishers.ofByteArray(json));
    return send(endpoint, request, "POST " + path, path);
  }

  /**
   * Blocking {@code send}, not {@code sendAsync}: {@code sendAsync} hands every answer on to CompletableFuture's
   * default executor, which on a JVM with fewer than three CPUs (the chart's one-CPU limit, this two-core
   * benchmark machine) is a new thread per answer. The request timeout covers connecting and the headers; the
   * body subscriber holds the rest of the same deadline, so a dripping body cannot outlast it either.
   */
  private EngineResponse send(EngineEndpoint endpoint, HttpRequest.Builder request, String what, String path)
      throws ProbeException {
    endpoint.bearerToken().ifPresent(token -> request.header("Authorization", "Bearer " + token));
    long deadlineNanos = System.nanoTime() + endpoint.timeout().toNanos();
    String timedOut = what + " timed out after " + endpoint.timeout().toMillis() + " ms";
    // probe.tls applies to https only: a plain-http engine is asked as before.
    HttpClient through = endpoint.tls().isPresent() && "https".equalsIgnoreCase(endpoint.baseUri().getScheme())
        ? tlsClients.forTls(endpoint.tls().get()) : client;
    try {
      HttpResponse<byte[]> response =
          through.send(request.build(), info -> new BoundedBody(maxBodyBytes, deadlineNanos));
      String contentType = response.headers().firstValue("content-type").orElse(null);
      return new EngineResponse(path, response.statusCode(), contentType, response.body());
    } catch (HttpTimeoutException e) {
      throw new ProbeException(timedOut);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ProbeException(what + " interrupted");
    } catch (IOException e) {
      // send() wraps what failed inside the exchange in a plain IOException; the cause says what it was.
      Throwable cause = e.getClass() == IOException.class && e.getCause() != null ? e.getCause() : e;
      if (cause instanceof TimeoutException) {
        throw new ProbeException(timedOut);
      }
      throw new ProbeException(what + " failed: " + describe(cause, endpoint));
    }
  }

  /** GET that must answer 200 with the given kind of body. */
  public EngineResponse getOk(EngineEndpoint endpoint, String path) throws ProbeException {
    EngineResponse response = get(endpoint, path);
    if (response.status() >= 300 && response.status() < 400) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status() + " (redirects are not followed)");
    }
    if (response.status() != 200) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status());
    }
    return response;
  }

  /**
   * GET {@code path} where an engine may not serve it: empty on HTTP 404 (the route is not mounted), the answer on
   * 200, and the same errors as {@link #getOk} on any other status.
   */
  public java.util.Optional<EngineResponse> getOkUnlessAbsent(EngineEndpoint endpoint, String path) throws ProbeException {
    EngineResponse response = get(endpoint, path);
    if (response.status() == 404) {
      return java.util.Optional.empty();
    }
    if (response.status() >= 300 && response.status() < 400) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status() + " (redirects are not followed)");
    }
    if (response.status() != 200) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status());
    }
    return java.util.Optional.of(response);
  }

  private static String describe(Throwable cause, EngineEndpoint endpoint) {
    if (cause instanceof BodyTooLargeException tooLarge) {
      return tooLarge.getMessage();
    }
    if (cause instanceof HttpTimeoutException) {
      return "timed out";
    }
    if (cause instanceof ConnectException) {
      return "connection refused";
    }
    if (cause instanceof SSLException) {
      return TlsFailures.describe((SSLException) cause, endpoint);
    }
    if (cause instanceof IOException io) {
      // Transport messages are the JDK's own (no engine payload), safe to show.
      return "I/O error (" + io.getClass().getSimpleName() + (io.getMessage() == null ? "" : ": " + io.getMessage()) + ")";
    }
    return cause == null ? "unknown error" : cause.getClass().getSimpleName();
  }

  /** Raised inside the body subscriber when an answer exceeds the byte cap. */
  static final class BodyTooLargeException extends IOException {
    BodyTooLargeException(int limit) {
      super("answer larger than " + limit + " bytes");
    }
  }

  /** Collects at most {@code limit} bytes until the deadline, then cancels the stream. */
  private static final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
    private final int limit;
    private final long deadlineNanos;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
    private Flow.Subscription subscription;

    BoundedBody(int limit, long deadlineNanos) {
      this.limit = limit;
      this.deadlineNanos = deadlineNanos;
    }

    @Override
    public CompletionStage<byte[]> getBody() {
      return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      this.subscription = subscription;
      // orTimeout's timer is CompletableFuture's one shared delay thread: nothing started per answer.
      result.orTimeout(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
          .whenComplete((body, failure) -> {
            if (failure != null) {
              subscription.cancel();
            }
          });
      subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
      if (result.isDone()) {
        return;
      }
      for (ByteBuffer item : items) {
        if (buffer.size() + item.remaining() > limit) {
          result.completeExceptionally(new BodyTooLargeException(limit));
          subscription.cancel();
          return;
        }
        byte[] chunk = new byte[item.remaining()];
        item.get(chunk);
        buffer.writeBytes(chunk);
      }
    }

    @Override
    public void onError(Throwable throwable) {
      result.completeExceptionally(throwable);
    }

    @Override
    public void onComplete() {
      result.complete(buffer.toByteArray());
    }
  }
}

package io.kvguard.probe;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import javax.net.ssl.SSLException;

/**
 * The only way probes reach engines: no redirects followed, one deadline covering headers and body,
 * a hard cap on the bytes read, and each body parsed as it streams in, keeping only what the
 * probe's {@link Reading} selects. Nothing of an answer is buffered whole, so the memory probes use
 * is bounded by what they read, not by what engines send (docs/reliability.md, "Hostile tenants and
 * engines").
 */
public final class EngineHttp {
  /**
   * The default byte cap of one answer. The largest legitimate answer a probe reads is a vLLM
   * /metrics page: about 330 sample lines (40 KiB) per data-parallel engine, all engines on one
   * page (docs/reliability.md, "Hostile tenants and engines"); 2 MiB holds about 48 engines.
   * Parsing is streamed, so the cap bounds the time spent on an answer, not memory.
   */
  public static final int DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;

  /**
   * Where GET answers come from: the network, or (for fuzzing and replaying captured answers)
   * memory.
   */
  @FunctionalInterface
  public interface Exchange {
    EngineResponse get(EngineEndpoint endpoint, String path) throws ProbeException;
  }

  /** Closes the bodies of answers whose deadline passed: one daemon thread for every probe. */
  private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

  /** The plain client; null on an in-memory exchange. */
  private final CompletableFuture<HttpClient> client;

  private final int maxBodyBytes;
  private final Exchange exchange;
  private final TlsClients tlsClients;
  private final WireCapture capture;

  /**
   * @param client for engines without TLS settings (http, or https verified by the JVM's trust
   *     store)
   */
  public EngineHttp(HttpClient client, int maxBodyBytes) {
    this(
        CompletableFuture.completedFuture(client),
        maxBodyBytes,
        null,
        new TlsClients(java.time.Clock.systemUTC()),
        null);
  }

  /**
   * The operator's: its plain client is built on a thread of its own, and the first probe waits for
   * it. Building a JDK client loads the JVM's default TLS context and trust store (even for plain
   * http: {@code HttpClient.newBuilder().build()} asks {@code SSLContext.getDefault()}), about 130
   * ms of a cold start that otherwise came before the ModelDeployment LIST (issue 28 §5). A client
   * that cannot be built fails every probe that needs it, with the reason.
   */
  public static EngineHttp buildingInBackground(int maxBodyBytes) {
    return buildingInBackground(EngineHttp::newHttpClient, maxBodyBytes);
  }

  /** {@link #buildingInBackground(int)} with the plain client from {@code build} (tests). */
  static EngineHttp buildingInBackground(Supplier<HttpClient> build, int maxBodyBytes) {
    CompletableFuture<HttpClient> client = new CompletableFuture<>();
    Thread builder =
        new Thread(
            () -> {
              try {
                client.complete(build.get());
              } catch (RuntimeException | Error e) {
                client.completeExceptionally(e);
              }
            },
            "kvguard-engine-http-client");
    builder.setDaemon(true);
    builder.start();
    return new EngineHttp(
        client, maxBodyBytes, null, new TlsClients(java.time.Clock.systemUTC()), null);
  }

  private EngineHttp(Exchange exchange) {
    this(null, Integer.MAX_VALUE, exchange, new TlsClients(java.time.Clock.systemUTC()), null);
  }

  private EngineHttp(
      CompletableFuture<HttpClient> client,
      int maxBodyBytes,
      Exchange exchange,
      TlsClients tlsClients,
      WireCapture capture) {
    this.client = client;
    this.maxBodyBytes = maxBodyBytes;
    this.exchange = exchange;
    this.tlsClients = tlsClients;
    this.capture = capture;
  }

  /**
   * The same client, with every request it sends and every answer it reads also kept in {@code
   * capture} ({@code check --record}; the operator never taps its probes).
   */
  public EngineHttp tapped(WireCapture capture) {
    return new EngineHttp(client, maxBodyBytes, exchange, tlsClients, capture);
  }

  /**
   * Probes run against answers held in memory, read through the same {@link Reading}s as on the
   * wire.
   */
  public static EngineHttp inMemory(Exchange exchange) {
    return new EngineHttp(exchange);
  }

  public static EngineHttp createDefault() {
    return new EngineHttp(newHttpClient(), DEFAULT_MAX_BODY_BYTES);
  }

  /**
   * The JDK client every probe uses: never follows redirects, HTTP/1.1, 5 s to connect. Idle
   * connections are closed after 5 s unless {@code -Djdk.httpclient.keepalive.timeout} says
   * otherwise: a probe's requests reuse one connection, but thousands of engines probed once a
   * minute must not each hold a socket and buffers (the JDK default keeps them 20 minutes).
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

  /**
   * GET {@code path}, keeping the head of the body ({@link Reading#raw()}); any status is returned.
   */
  public EngineResponse get(EngineEndpoint endpoint, String path) throws ProbeException {
    return get(endpoint, path, Reading.raw());
  }

  /**
   * GET {@code path}, keeping what {@code reading} selects; any status is returned, transport
   * failures thrown.
   */
  public EngineResponse get(EngineEndpoint endpoint, String path, Reading reading)
      throws ProbeException {
    if (exchange != null) {
      EngineResponse whole = exchange.get(endpoint, path);
      try {
        return AnswerReader.read(
            path,
            whole.status(),
            whole.contentType(),
            new java.io.ByteArrayInputStream(whole.body()),
            reading);
      } catch (IOException e) {
        throw new ProbeException("GET " + path + " failed: " + describe(e, endpoint));
      }
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(endpoint.resolve(path))
            .header("Accept", "application/json, text/plain;q=0.9")
            .GET();
    return send(endpoint, request, "GET " + path, path, reading);
  }

  /** GET that must answer 200, keeping the head of the body. */
  public EngineResponse getOk(EngineEndpoint endpoint, String path) throws ProbeException {
    return getOk(endpoint, path, Reading.raw());
  }

  /** GET that must answer 200, keeping what {@code reading} selects. */
  public EngineResponse getOk(EngineEndpoint endpoint, String path, Reading reading)
      throws ProbeException {
    EngineResponse response = get(endpoint, path, reading);
    if (response.status() >= 300 && response.status() < 400) {
      throw new ProbeException(
          "GET " + path + " answered HTTP " + response.status() + " (redirects are not followed)");
    }
    if (response.status() != 200) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status());
    }
    return response;
  }

  /**
   * GET {@code path} where an engine may not serve it: empty on HTTP 404 (the route is not
   * mounted), the answer on 200, and the same errors as {@link #getOk} on any other status.
   */
  public java.util.Optional<EngineResponse> getOkUnlessAbsent(EngineEndpoint endpoint, String path)
      throws ProbeException {
    return getOkUnlessAbsent(endpoint, path, Reading.raw());
  }

  /** {@link #getOkUnlessAbsent(EngineEndpoint, String)}, keeping what {@code reading} selects. */
  public java.util.Optional<EngineResponse> getOkUnlessAbsent(
      EngineEndpoint endpoint, String path, Reading reading) throws ProbeException {
    EngineResponse response = get(endpoint, path, reading);
    if (response.status() == 404) {
      return java.util.Optional.empty();
    }
    if (response.status() >= 300 && response.status() < 400) {
      throw new ProbeException(
          "GET " + path + " answered HTTP " + response.status() + " (redirects are not followed)");
    }
    if (response.status() != 200) {
      throw new ProbeException("GET " + path + " answered HTTP " + response.status());
    }
    return java.util.Optional.of(response);
  }

  /** POST a JSON body (the rejection probe); same deadline, cap and redirect rules as GET. */
  public EngineResponse postJson(EngineEndpoint endpoint, String path, byte[] json)
      throws ProbeException {
    return postJson(endpoint, path, HttpRequest.BodyPublishers.ofByteArray(json));
  }

  /**
   * POST a JSON body produced as it is sent ({@link OverLimitPrompt}: millions of token IDs are
   * never held in memory); the answer is kept raw: its head, length and SHA-256.
   */
  public EngineResponse postJson(
      EngineEndpoint endpoint, String path, HttpRequest.BodyPublisher body) throws ProbeException {
    if (client == null) {
      throw new ProbeException("POST " + path + " is not available on an in-memory exchange");
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(endpoint.resolve(path))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .POST(body);
    return send(endpoint, request, "POST " + path, path, Reading.raw());
  }

  /**
   * DELETE {@code path} (a worker kvguard added to a proof router, {@link RouterWorkers}); same
   * deadline, cap and redirect rules as GET, any status returned.
   */
  public EngineResponse delete(EngineEndpoint endpoint, String path) throws ProbeException {
    if (client == null) {
      throw new ProbeException("DELETE " + path + " is not available on an in-memory exchange");
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(endpoint.resolve(path))
            .header("Accept", "application/json")
            .DELETE();
    return send(endpoint, request, "DELETE " + path, path, Reading.raw());
  }

  /**
   * Blocking {@code send}, not {@code sendAsync}: {@code sendAsync} hands every answer on to
   * CompletableFuture's default executor, which on a JVM with fewer than three CPUs (the chart's
   * one-CPU limit, this two-core benchmark machine) is a new thread per answer. The request timeout
   * covers connecting and the headers; the body is read on this thread under the rest of the same
   * deadline (the endpoint's, which a probe shares across its requests), and a body still arriving
   * when it passes is closed, so a dripping engine cannot outlast it.
   */
  private EngineResponse send(
      EngineEndpoint endpoint,
      HttpRequest.Builder request,
      String what,
      String path,
      Reading reading)
      throws ProbeException {
    endpoint.bearerToken().ifPresent(token -> request.header("Authorization", "Bearer " + token));
    String timedOut = what + " timed out after " + endpoint.timeout().toMillis() + " ms";
    long remaining = endpoint.remainingNanos();
    if (remaining <= 0) {
      throw new ProbeException(timedOut);
    }
    long deadlineNanos = System.nanoTime() + remaining;
    request.timeout(Duration.ofNanos(remaining));
    // probe.tls applies to https only: a plain-http engine is asked as before.
    HttpClient through =
        endpoint.tls().isPresent() && "https".equalsIgnoreCase(endpoint.baseUri().getScheme())
            ? tlsClients.forTls(endpoint.tls().get())
            : plainClient();
    HttpRequest built = request.build();
    WireCapture.Exchange tap = capture == null ? null : capture.begin(built);
    try {
      return send(
          endpoint,
          tap == null ? built : tap.request(),
          through,
          tap,
          what,
          path,
          reading,
          deadlineNanos);
    } catch (ProbeException e) {
      if (tap != null) {
        tap.failed(e.getMessage());
      }
      throw e;
    }
  }

  private HttpClient plainClient() throws ProbeException {
    try {
      return client.join();
    } catch (java.util.concurrent.CompletionException e) {
      throw new ProbeException("the operator could not build its HTTP client: " + e.getCause());
    }
  }

  private EngineResponse send(
      EngineEndpoint endpoint,
      HttpRequest request,
      HttpClient through,
      WireCapture.Exchange tap,
      String what,
      String path,
      Reading reading,
      long deadlineNanos)
      throws ProbeException {
    String timedOut = what + " timed out after " + endpoint.timeout().toMillis() + " ms";
    try {
      HttpResponse<InputStream> response =
          through.send(request, HttpResponse.BodyHandlers.ofInputStream());
      String contentType = response.headers().firstValue("content-type").orElse(null);
      InputStream raw = response.body();
      if (tap != null) {
        tap.answered(response.statusCode(), response.headers());
        raw = tap.answerBody(raw);
      }
      try (BoundedBody body = new BoundedBody(raw, maxBodyBytes, deadlineNanos)) {
        return AnswerReader.read(path, response.statusCode(), contentType, body, reading);
      }
    } catch (HttpTimeoutException | DeadlinePassed e) {
      throw new ProbeException(timedOut);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ProbeException(what + " interrupted");
    } catch (IOException e) {
      // send() wraps what failed inside the exchange in a plain IOException; the cause says what it
      // was.
      Throwable cause =
          e.getClass() == IOException.class && e.getCause() != null ? e.getCause() : e;
      if (cause instanceof TimeoutException) {
        throw new ProbeException(timedOut);
      }
      throw new ProbeException(what + " failed: " + describe(cause, endpoint));
    }
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
      return "I/O error ("
          + io.getClass().getSimpleName()
          + (io.getMessage() == null ? "" : ": " + io.getMessage())
          + ")";
    }
    return cause == null ? "unknown error" : cause.getClass().getSimpleName();
  }

  private static ScheduledThreadPoolExecutor deadlines() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "kvguard-probe-deadlines");
              thread.setDaemon(true);
              return thread;
            });
    // Most answers arrive in time: their cancelled closers must not pile up until their deadline.
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /** Raised while reading a body that exceeds the byte cap. */
  static final class BodyTooLargeException extends IOException {
    BodyTooLargeException(int limit) {
      super("answer larger than " + limit + " bytes");
    }
  }

  /** Raised while reading a body whose deadline passed. */
  static final class DeadlinePassed extends IOException {
    DeadlinePassed() {
      super("deadline passed");
    }
  }

  /**
   * A body read on the probe's thread: at most {@code limit} bytes, and closed by the deadline
   * timer if it is still being read when the deadline passes (closing the JDK's stream wakes a read
   * blocked on it).
   */
  private static final class BoundedBody extends FilterInputStream {
    private final int limit;
    private final long deadlineNanos;
    private final ScheduledFuture<?> closer;
    private volatile boolean expired;
    private long read;

    BoundedBody(InputStream in, int limit, long deadlineNanos) {
      super(in);
      this.limit = limit;
      this.deadlineNanos = deadlineNanos;
      this.closer =
          DEADLINES.schedule(
              this::expire, Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void expire() {
      expired = true;
      try {
        in.close();
      } catch (IOException e) {
        // Closing only wakes the reader; the reader reports the deadline.
        expired = true;
      }
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (expired || System.nanoTime() - deadlineNanos > 0) {
        throw new DeadlinePassed();
      }
      int n;
      try {
        n = super.read(b, off, (int) Math.min(len, limit - read + 1L));
      } catch (IOException e) {
        if (expired) {
          throw new DeadlinePassed();
        }
        throw e;
      }
      if (expired) {
        throw new DeadlinePassed();
      }
      if (n > 0) {
        read += n;
        if (read > limit) {
          throw new BodyTooLargeException(limit);
        }
      }
      return n;
    }

    @Override
    public void close() throws IOException {
      closer.cancel(false);
      super.close();
    }
  }
}

package io.kvguard.probe;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Flow;

/**
 * What probes sent to engines and what they read back, request by request, as {@link
 * EngineHttp#tapped} sees them on the wire: for {@code check --record} and for telling the user
 * when an engine asked for credentials. Each body keeps its first {@code bodyCap} bytes and counts
 * the rest. It holds what was sent as sent, the Authorization header included: whoever writes it
 * anywhere redacts it first. The operator never taps its probes.
 */
public final class WireCapture {
  /** The bytes of each body kept: a whole llama.cpp or SGLang answer, the head of a large one. */
  public static final int DEFAULT_BODY_CAP = 64 * 1024;

  private final int bodyCap;
  private final List<Exchange> exchanges = new ArrayList<>();

  public WireCapture() {
    this(DEFAULT_BODY_CAP);
  }

  public WireCapture(int bodyCap) {
    this.bodyCap = bodyCap;
  }

  /** Every request sent so far, in the order sent. */
  public synchronized List<Exchange> exchanges() {
    return List.copyOf(exchanges);
  }

  /** Whether any engine answered 401 or 403: it wants credentials, or not the ones sent. */
  public OptionalInt credentialsRefused() {
    return exchanges().stream()
        .mapToInt(Exchange::status)
        .filter(status -> status == 401 || status == 403)
        .findFirst();
  }

  /** Starts recording {@code request}; {@link Exchange#request()} is what to send in its place. */
  synchronized Exchange begin(HttpRequest request) {
    Exchange exchange = new Exchange(request, bodyCap);
    exchanges.add(exchange);
    return exchange;
  }

  /** One request and what came back of it. */
  public static final class Exchange {
    private final String method;
    private final URI uri;
    private final Map<String, List<String>> requestHeaders;
    private final Body requestBody;
    private final Body answerBody;
    private final HttpRequest request;
    private volatile int status = -1;
    private volatile Map<String, List<String>> answerHeaders = Map.of();
    private volatile String failure;

    private Exchange(HttpRequest original, int bodyCap) {
      this.method = original.method();
      this.uri = original.uri();
      this.requestHeaders = original.headers().map();
      this.requestBody = new Body(bodyCap);
      this.answerBody = new Body(bodyCap);
      this.request =
          original
              .bodyPublisher()
              .map(
                  publisher ->
                      HttpRequest.newBuilder(original, (name, value) -> true)
                          .method(original.method(), new TeePublisher(publisher, requestBody))
                          .build())
              .orElse(original);
    }

    HttpRequest request() {
      return request;
    }

    void answered(int status, HttpHeaders headers) {
      this.status = status;
      this.answerHeaders = headers.map();
    }

    /** The answer's body as the probe reads it, kept up to the cap as it passes. */
    InputStream answerBody(InputStream in) {
      return new TeeStream(in, answerBody);
    }

    void failed(String message) {
      this.failure = message;
    }

    public String method() {
      return method;
    }

    public URI uri() {
      return uri;
    }

    public Map<String, List<String>> requestHeaders() {
      return requestHeaders;
    }

    public Body requestBody() {
      return requestBody;
    }

    /** The HTTP status, or -1 when no answer came (refused connection, timeout before headers). */
    public int status() {
      return status;
    }

    public Map<String, List<String>> answerHeaders() {
      return answerHeaders;
    }

    public Body answerBody() {
      return answerBody;
    }

    /** Why the exchange failed (the probe's own words), if it did. */
    public Optional<String> failure() {
      return Optional.ofNullable(failure);
    }
  }

  /** The first bytes of a body and how many there were in all. */
  public static final class Body {
    private final int cap;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
    private long total;

    Body(int cap) {
      this.cap = cap;
    }

    synchronized void add(byte[] bytes, int offset, int length) {
      int room = (int) Math.max(0, Math.min(length, cap - (long) kept.size()));
      kept.write(bytes, offset, room);
      total += length;
    }

    void add(ByteBuffer buffer) {
      ByteBuffer copy = buffer.duplicate();
      byte[] bytes = new byte[copy.remaining()];
      copy.get(bytes);
      add(bytes, 0, bytes.length);
    }

    public synchronized byte[] bytes() {
      return kept.toByteArray();
    }

    /** Bytes that passed, kept or not. */
    public synchronized long total() {
      return total;
    }

    /** Whether the cap cut it. */
    public synchronized boolean cut() {
      return total > kept.size();
    }
  }

  /** A request body handed on unchanged, its head kept as it is sent. */
  private record TeePublisher(HttpRequest.BodyPublisher delegate, Body body)
      implements HttpRequest.BodyPublisher {
    @Override
    public long contentLength() {
      return delegate.contentLength();
    }

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
      delegate.subscribe(
          new Flow.Subscriber<ByteBuffer>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
              subscriber.onSubscribe(subscription);
            }

            @Override
            public void onNext(ByteBuffer item) {
              body.add(item);
              subscriber.onNext(item);
            }

            @Override
            public void onError(Throwable throwable) {
              subscriber.onError(throwable);
            }

            @Override
            public void onComplete() {
              subscriber.onComplete();
            }
          });
    }
  }

  /** An answer body handed on unchanged, its head kept as it is read. */
  private static final class TeeStream extends FilterInputStream {
    private final Body body;

    TeeStream(InputStream in, Body body) {
      super(in);
      this.body = body;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        body.add(new byte[] {(byte) b}, 0, 1);
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        body.add(b, off, n);
      }
      return n;
    }
  }
}

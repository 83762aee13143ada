package io.kvguard.webhook;

import io.kvguard.net.NonBlockingServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTPS for the API server's admission calls: {@code POST /mutate-v1-pod} on {@code
 * KVGUARD_WEBHOOK_PORT}.
 *
 * <p>Like {@link io.kvguard.HealthServer}, one thread serves every connection without blocking on
 * any (review of issue 20: a server that reads each request on a thread of a pool is held by as
 * many half-sent requests as it has threads, and any pod can connect to this port while the chart's
 * NetworkPolicy is off). TLS runs on an {@link SSLEngine} per connection. Bounds: a request
 * (handshake, headers and body) must arrive within {@link #REQUEST_NANOS} of its first byte, an
 * idle kept-alive connection is closed after {@link #IDLE_NANOS}, a request holds at most {@link
 * #MAX_REQUEST_BYTES}, all connections together at most {@link #MAX_BUFFERED_BYTES} of request
 * buffers, and beyond {@link #MAX_CONNECTIONS} (or that many bytes) the oldest connection is
 * closed. The API server keeps its connection alive and sends each review whole, so it is answered
 * however many others dawdle; a connection that was closed under it costs one retry, and at worst
 * the webhook's failurePolicy.
 *
 * <p>The key pair is looked at again every second ({@link ServingCertificate#refresh()}); new
 * connections get a new pair at once.
 */
public final class WebhookServer extends NonBlockingServer {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookServer.class);
  public static final String PATH = "/mutate-v1-pod";
  static final int MAX_CONNECTIONS = 128;

  /**
   * The largest review a pod the API server can store makes. etcd stores at most 1.5 MiB (its
   * default {@code --max-request-bytes}), and the API server sends the review through Go's
   * encoding/json, whose HTML escaping writes each {@code <}, {@code >} and {@code &} of the stored
   * pod as six bytes (a backslash, u003c; apimachinery pkg/runtime/serializer/json/json.go at
   * v0.34.9): 6 x 1.5 MiB, plus the review around the pod. The 3 MiB the API server allows a
   * request body is no bound here: a 1.4 MiB pod of {@code <} is an 8.4 MiB review.
   */
  static final int MAX_REQUEST_BYTES = 6 * 1536 * 1024 + 64 * 1024;

  static final long MAX_BUFFERED_BYTES = 48L * 1024 * 1024;
  static final int MAX_HEADER_BYTES = 16 * 1024;

  /**
   * The API server waits at most timeoutSeconds (≤ 10) for an answer: no request needs longer to
   * arrive.
   */
  static final long REQUEST_NANOS = TimeUnit.SECONDS.toNanos(10);

  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final ServingCertificate certificate;
  private final Function<byte[], byte[]> handler;

  private long buffered;
  private long lastRefresh;

  /**
   * @param handler the AdmissionReview answer for a request body; runs on the server's thread, so
   *     it must not block (it reads caches only) and must not throw
   */
  public WebhookServer(int port, ServingCertificate certificate, Function<byte[], byte[]> handler)
      throws IOException {
    super(port, 128, MAX_CONNECTIONS, "kvguard-webhook");
    this.certificate = certificate;
    this.handler = handler;
  }

  @Override
  public void start() {
    certificate.refresh();
    lastRefresh = System.nanoTime();
    super.start();
  }

  /**
   * True once a key pair was read: until then every connection is closed at once (nothing to serve
   * with).
   */
  public boolean serving() {
    return certificate.context().isPresent();
  }

  /** One connection: its TLS engine and buffers. */
  private final class Connection {
    final SSLEngine engine;
    final SocketChannel channel;
    ByteBuffer netIn;
    ByteBuffer appIn;
    ByteBuffer netOut;
    long deadline;
    boolean closeAfterWrite;

    /** Has carried a whole review (the API server's connections have): it goes last for room. */
    boolean servedReview;

    Connection(SSLEngine engine, SocketChannel channel, long now) {
      this.engine = engine;
      this.channel = channel;
      int packet = engine.getSession().getPacketBufferSize();
      this.netIn = ByteBuffer.allocate(packet);
      this.appIn = ByteBuffer.allocate(16 * 1024);
      this.netOut = ByteBuffer.allocate(packet);
      this.deadline = now + REQUEST_NANOS;
      buffered += size();
    }

    long size() {
      return netIn.capacity() + appIn.capacity() + netOut.capacity();
    }
  }

  @Override
  protected void afterRound(long nowNanos) {
    while (buffered > MAX_BUFFERED_BYTES && open.size() > 1) {
      makeRoom(WebhookServer::bufferedBytes);
    }
    if (nowNanos - lastRefresh >= TimeUnit.SECONDS.toNanos(1)) {
      lastRefresh = nowNanos;
      certificate.refresh();
    }
  }

  @Override
  protected boolean expired(SelectionKey key, long nowNanos) {
    return nowNanos - ((Connection) key.attachment()).deadline > 0;
  }

  @Override
  protected void accepted(SocketChannel channel) throws IOException {
    SSLContext context = certificate.context().orElse(null);
    if (context == null) {
      channel.close();
      return;
    }
    channel.configureBlocking(false);
    channel.socket().setTcpNoDelay(true);
    SSLEngine engine = context.createSSLEngine();
    engine.setUseClientMode(false);
    engine.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
    Connection connection = new Connection(engine, channel, System.nanoTime());
    open.add(channel.register(selector, SelectionKey.OP_READ, connection));
    while (buffered > MAX_BUFFERED_BYTES && open.size() > 1) {
      makeRoom(WebhookServer::bufferedBytes);
    }
  }

  @Override
  protected boolean expendable(SelectionKey key) {
    return !((Connection) key.attachment()).servedReview;
  }

  private static long bufferedBytes(SelectionKey key) {
    return ((Connection) key.attachment()).size();
  }

  /**
   * Reads what arrived, runs the handshake, answers every whole request, writes what is pending.
   */
  @Override
  protected void ready(SelectionKey key) {
    Connection c = (Connection) key.attachment();
    try {
      if (c.channel.read(c.netIn) < 0) {
        drop(key);
        return;
      }
      boolean progress = true;
      while (progress && key.isValid()) {
        progress = step(c);
        if (!flush(c)) {
          break;
        }
        if (!c.engine.isInboundDone()
            && c.engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING) {
          progress |= answerWholeRequests(c);
        }
      }
      boolean pending = c.netOut.position() > 0;
      if (!pending && (c.closeAfterWrite || c.engine.isOutboundDone())) {
        drop(key);
        return;
      }
      key.interestOps(
          pending ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    } catch (IOException | RuntimeException e) {
      // A client that breaks TLS or HTTP loses its connection, nothing else.
      LOG.debug("webhook connection dropped error={}", e.toString());
      drop(key);
    }
  }

  /** One step of the TLS engine; true when it made progress. */
  private boolean step(Connection c) throws IOException {
    switch (c.engine.getHandshakeStatus()) {
      case NEED_TASK -> {
        for (Runnable task = c.engine.getDelegatedTask();
            task != null;
            task = c.engine.getDelegatedTask()) {
          task.run();
        }
        return true;
      }
      case NEED_WRAP -> {
        return wrap(c, EMPTY);
      }
      default -> {
        if (c.netIn.position() == 0) {
          return false;
        }
        c.netIn.flip();
        SSLEngineResult result;
        try {
          result = c.engine.unwrap(c.netIn, c.appIn);
        } finally {
          c.netIn.compact();
        }
        switch (result.getStatus()) {
          case BUFFER_UNDERFLOW -> {
            if (!c.netIn.hasRemaining()) {
              c.netIn =
                  grow(
                      c, c.netIn, c.engine.getSession().getPacketBufferSize() + c.netIn.capacity());
            }
            return false;
          }
          case BUFFER_OVERFLOW -> {
            // Doubling, but never past what the largest request needs: doubling alone overshoots
            // the bound and refused requests it should take (from 2 MiB on, when the bound was 3
            // MiB).
            int unit = c.engine.getSession().getApplicationBufferSize();
            int limit = MAX_REQUEST_BYTES + MAX_HEADER_BYTES + unit;
            int needed = c.appIn.position() + unit;
            if (needed > limit) {
              throw new IOException("request larger than " + MAX_REQUEST_BYTES + " bytes");
            }
            c.appIn = grow(c, c.appIn, Math.max(needed, Math.min(c.appIn.capacity() * 2, limit)));
            return true;
          }
          case CLOSED -> {
            c.closeAfterWrite = true;
            c.engine.closeOutbound();
            return true;
          }
          default -> {
            return result.bytesConsumed() > 0 || result.bytesProduced() > 0;
          }
        }
      }
    }
  }

  private boolean wrap(Connection c, ByteBuffer source) throws SSLException {
    while (true) {
      SSLEngineResult result = c.engine.wrap(source, c.netOut);
      if (result.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
        c.netOut =
            grow(c, c.netOut, c.netOut.capacity() + c.engine.getSession().getPacketBufferSize());
        continue;
      }
      if (result.getStatus() == SSLEngineResult.Status.CLOSED) {
        c.closeAfterWrite = true;
      }
      if (!source.hasRemaining() || result.bytesConsumed() == 0 && result.bytesProduced() == 0) {
        return result.bytesProduced() > 0 || result.bytesConsumed() > 0;
      }
    }
  }

  /** Writes what is pending; true when nothing is left. */
  private static boolean flush(Connection c) throws IOException {
    c.netOut.flip();
    try {
      c.channel.write(c.netOut);
      return !c.netOut.hasRemaining();
    } finally {
      c.netOut.compact();
    }
  }

  private ByteBuffer grow(Connection c, ByteBuffer buffer, int capacity) {
    ByteBuffer bigger = ByteBuffer.allocate(capacity);
    buffer.flip();
    bigger.put(buffer);
    buffered += capacity - buffer.capacity();
    return bigger;
  }

  /** Answers each request that has arrived whole; true when one was answered. */
  private boolean answerWholeRequests(Connection c) throws IOException {
    boolean answered = false;
    while (true) {
      byte[] data = c.appIn.array();
      int length = c.appIn.position();
      if (length > 0 && c.deadline - System.nanoTime() > REQUEST_NANOS) {
        // The first byte of a request on an idle kept-alive connection: from now on it has
        // REQUEST_NANOS.
        c.deadline = System.nanoTime() + REQUEST_NANOS;
      }
      int headerEnd = indexOf(data, length, "\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      if (headerEnd < 0) {
        if (length > MAX_HEADER_BYTES) {
          respond(c, 431, "Request Header Fields Too Large", "", true);
          return true;
        }
        return answered;
      }
      String head = new String(data, 0, headerEnd, StandardCharsets.ISO_8859_1);
      Request request = Request.parse(head);
      if (request.contentLength() < 0 || request.chunked()) {
        // The API server always sends a Content-Length; anything else is not it.
        respond(c, 411, "Length Required", "", true);
        return true;
      }
      if (request.contentLength() > MAX_REQUEST_BYTES) {
        respond(c, 413, "Content Too Large", "", true);
        return true;
      }
      int total = headerEnd + 4 + (int) request.contentLength();
      if (length < total) {
        return answered;
      }
      byte[] body = java.util.Arrays.copyOfRange(data, headerEnd + 4, total);
      // What follows this request (a pipelined next one) stays.
      c.appIn.flip();
      c.appIn.position(total);
      c.appIn.compact();
      if (!PATH.equals(request.path())) {
        respond(c, 404, "Not Found", "", request.close());
      } else if (!"POST".equals(request.method())) {
        respond(c, 405, "Method Not Allowed", "", request.close());
      } else {
        respond(
            c, 200, "OK", new String(handler.apply(body), StandardCharsets.UTF_8), request.close());
        c.servedReview = true;
      }
      c.deadline = System.nanoTime() + IDLE_NANOS;
      answered = true;
      if (c.closeAfterWrite) {
        return true;
      }
    }
  }

  private void respond(Connection c, int status, String reason, String json, boolean close)
      throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    byte[] head =
        ("HTTP/1.1 "
                + status
                + " "
                + reason
                + "\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length
                + (close ? "\r\nConnection: close" : "")
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    ByteBuffer answer = ByteBuffer.allocate(head.length + body.length).put(head).put(body).flip();
    wrap(c, answer);
    if (close) {
      c.closeAfterWrite = true;
      c.engine.closeOutbound();
      wrap(c, EMPTY);
    }
  }

  /** The request line and the headers this server reads. */
  record Request(String method, String path, long contentLength, boolean chunked, boolean close) {
    static Request parse(String head) throws IOException {
      String[] lines = head.split("\r\n");
      String[] parts = lines[0].split(" ");
      if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
        throw new IOException("not an HTTP/1.x request line");
      }
      String path = parts[1];
      int query = path.indexOf('?');
      path = query < 0 ? path : path.substring(0, query);
      long contentLength = -1;
      boolean chunked = false;
      boolean close = "HTTP/1.0".equals(parts[2]);
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon <= 0) {
          throw new IOException("malformed header line");
        }
        String name = lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT);
        String value = lines[i].substring(colon + 1).strip();
        switch (name) {
          case "content-length" -> {
            try {
              long parsed = Long.parseLong(value);
              if (parsed < 0 || (contentLength >= 0 && contentLength != parsed)) {
                throw new IOException("bad Content-Length");
              }
              contentLength = parsed;
            } catch (NumberFormatException e) {
              throw new IOException("bad Content-Length");
            }
          }
          case "transfer-encoding" -> chunked = true;
          case "connection" -> close = value.toLowerCase(Locale.ROOT).contains("close");
          default -> {}
        }
      }
      return new Request(parts[0], path, contentLength, chunked, close);
    }
  }

  private static int indexOf(byte[] data, int length, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (data[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  @Override
  protected void dropping(SelectionKey key) {
    if (key.attachment() instanceof Connection c && key.isValid()) {
      buffered -= c.size();
    }
  }
}

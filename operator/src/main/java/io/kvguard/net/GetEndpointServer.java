package io.kvguard.net;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Plain HTTP/1.1 {@code GET} and {@code HEAD} on a few fixed paths (/healthz, /readyz, /metrics),
 * one thread, no connection ever blocking it: a connection holds at most {@link #MAX_REQUEST_BYTES}
 * of request and {@link #MAX_CONNECTION_NANOS} from its first byte to the last byte of its answer,
 * after which it is closed. Every answer closes its connection, which is what the kubelet and
 * Prometheus expect of a small status port.
 *
 * <p>Why not the JDK's {@code com.sun.net.httpserver} (issue 28 §3): it reads each request on one
 * of a fixed number of threads, so 24 clients holding half-sent requests reset a Prometheus scrape.
 * Here half-sent requests hold a buffer, not a thread; beyond {@code maxConnections} the oldest
 * connection of the client address holding the most is closed first among those that never carried
 * a whole request ({@link NonBlockingServer#makeRoom}), so a client that sends its request at once
 * (Prometheus, the kubelet) is answered however many dawdle.
 *
 * <p>An answer a client does not read is written as the socket takes it, never waited for. Answers
 * in flight hold at most {@link #MAX_PENDING_ANSWER_BYTES} in all: beyond, the heaviest client's
 * oldest is closed, so clients that ask for /metrics and never read cannot fill the heap.
 */
public class GetEndpointServer extends NonBlockingServer {
  /** A request line and headers: the kubelet and Prometheus send a few hundred bytes. */
  public static final int MAX_REQUEST_BYTES = 4096;

  /** Time a connection has from its opening to the end of its answer. */
  public static final long MAX_CONNECTION_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** Answers written but not yet taken by their clients, in all (a scrape is tens of KiB). */
  public static final long MAX_PENDING_ANSWER_BYTES = 32L * 1024 * 1024;

  /** What a path answers: status, content type and body, computed when a request asks for it. */
  public record Answer(int status, String contentType, byte[] body) {
    public static Answer text(int status, String body) {
      return new Answer(status, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static final class Connection {
    final ByteBuffer request = ByteBuffer.allocate(MAX_REQUEST_BYTES);
    final long openedAt = System.nanoTime();
    ByteBuffer answer;

    /** The whole answer's array is held until the connection ends, however much was written. */
    long heldBytes;
  }

  private final Map<String, Supplier<Answer>> paths;
  private long pendingAnswerBytes;

  /**
   * @param paths what each path answers; any other path is 404
   */
  public GetEndpointServer(
      InetSocketAddress address,
      int maxConnections,
      String threadName,
      Map<String, Supplier<Answer>> paths)
      throws IOException {
    super(address, 64, maxConnections, threadName);
    this.paths = Map.copyOf(paths);
  }

  @Override
  protected final void accepted(SocketChannel channel) throws IOException {
    channel.configureBlocking(false);
    open.add(channel.register(selector, SelectionKey.OP_READ, new Connection()));
  }

  @Override
  protected final boolean expired(SelectionKey key, long nowNanos) {
    return nowNanos - ((Connection) key.attachment()).openedAt > MAX_CONNECTION_NANOS;
  }

  @Override
  protected final boolean expendable(SelectionKey key) {
    return ((Connection) key.attachment()).answer == null;
  }

  @Override
  protected final void dropping(SelectionKey key) {
    Connection connection = (Connection) key.attachment();
    pendingAnswerBytes -= connection.heldBytes;
    connection.heldBytes = 0;
    connection.answer = null;
  }

  @Override
  protected final void ready(SelectionKey key) {
    Connection connection = (Connection) key.attachment();
    SocketChannel channel = (SocketChannel) key.channel();
    try {
      if (connection.answer == null) {
        read(key, connection, channel);
      }
      if (connection.answer != null && key.isValid()) {
        channel.write(connection.answer);
        if (connection.answer.hasRemaining()) {
          key.interestOps(SelectionKey.OP_WRITE);
        } else {
          drop(key);
        }
      }
    } catch (IOException e) {
      drop(key);
    }
  }

  private void read(SelectionKey key, Connection connection, SocketChannel channel)
      throws IOException {
    int n = channel.read(connection.request);
    String head =
        new String(
            connection.request.array(),
            0,
            connection.request.position(),
            StandardCharsets.ISO_8859_1);
    if (head.contains("\r\n\r\n")) {
      connection.answer = ByteBuffer.wrap(answer(head.substring(0, head.indexOf("\r\n"))));
      connection.heldBytes = connection.answer.capacity();
      pendingAnswerBytes += connection.heldBytes;
      // This answer is kept, however large, so a scrape above the bound is still served.
      while (pendingAnswerBytes > MAX_PENDING_ANSWER_BYTES
          && makeRoomAmong(
              held -> held != key && ((Connection) held.attachment()).heldBytes > 0,
              held -> ((Connection) held.attachment()).heldBytes)) {
        // closed the heaviest client's oldest answer in flight
      }
    } else if (n < 0 || !connection.request.hasRemaining()) {
      drop(key);
    }
  }

  private byte[] answer(String requestLine) {
    String[] parts = requestLine.split(" ");
    String path = parts.length == 3 ? parts[1] : "";
    int query = path.indexOf('?');
    path = query < 0 ? path : path.substring(0, query);
    Supplier<Answer> handler = paths.get(path);
    Answer answer;
    if (parts.length != 3) {
      answer = Answer.text(400, "");
    } else if (handler == null) {
      answer = Answer.text(404, "");
    } else if (!"GET".equals(parts[0]) && !"HEAD".equals(parts[0])) {
      answer = Answer.text(405, "");
    } else {
      answer = handler.get();
    }
    byte[] head =
        ("HTTP/1.1 "
                + answer.status()
                + " "
                + reasonPhrase(answer.status())
                + "\r\nContent-Type: "
                + answer.contentType()
                + "\r\nContent-Length: "
                + answer.body().length
                + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    if ("HEAD".equals(parts[0])) {
      return head;
    }
    byte[] whole = new byte[head.length + answer.body().length];
    System.arraycopy(head, 0, whole, 0, head.length);
    System.arraycopy(answer.body(), 0, whole, head.length, answer.body().length);
    return whole;
  }

  private static String reasonPhrase(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 503 -> "Service Unavailable";
      default -> "Status";
    };
  }
}

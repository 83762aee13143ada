package io.kvguard;

import io.kvguard.net.NonBlockingServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * /healthz and /readyz for the kubelet, on a port of their own (KVGUARD_HEALTH_PORT): whatever
 * holds the metrics port cannot make the kubelet restart the operator. The chart's NetworkPolicy
 * opens no ingress to this port; the kubelet's probes come from the node.
 *
 * <p>Not the JDK's {@code com.sun.net.httpserver}: that server reads each request on an executor
 * thread, so as many half-sent requests as it has threads keep every other connection out until its
 * request time limit cuts them (review of issue 20: 20 such connections, which any pod can open
 * while the NetworkPolicy is off, the chart's default, failed /healthz). Here one thread reads
 * every connection without blocking: a connection holds at most {@link #MAX_REQUEST_BYTES} bytes
 * and {@link #MAX_REQUEST_NANOS}, and beyond {@link #MAX_CONNECTIONS} the oldest is closed, so a
 * kubelet's request, sent whole as soon as it connects, is answered however many connections
 * dawdle.
 */
public final class HealthServer extends NonBlockingServer {
  static final int MAX_REQUEST_BYTES = 4096;
  static final int MAX_CONNECTIONS = 256;
  static final long MAX_REQUEST_NANOS =
      TimeUnit.SECONDS.toNanos(Long.parseLong(OperatorHttp.MAX_REQUEST_SECONDS));

  private final BooleanSupplier liveness;
  private final BooleanSupplier readiness;

  private record Connection(ByteBuffer request, long openedAt) {}

  public HealthServer(int port, BooleanSupplier live, BooleanSupplier ready) throws IOException {
    super(port, 64, MAX_CONNECTIONS, "kvguard-health");
    this.liveness = live;
    this.readiness = ready;
  }

  @Override
  protected void accepted(SocketChannel channel) throws IOException {
    channel.configureBlocking(false);
    open.add(
        channel.register(
            selector,
            SelectionKey.OP_READ,
            new Connection(ByteBuffer.allocate(MAX_REQUEST_BYTES), System.nanoTime())));
  }

  @Override
  protected boolean expired(SelectionKey key, long nowNanos) {
    return nowNanos - ((Connection) key.attachment()).openedAt() > MAX_REQUEST_NANOS;
  }

  @Override
  protected void ready(SelectionKey key) {
    Connection connection = (Connection) key.attachment();
    SocketChannel channel = (SocketChannel) key.channel();
    try {
      int n = channel.read(connection.request());
      String head =
          new String(
              connection.request().array(),
              0,
              connection.request().position(),
              StandardCharsets.ISO_8859_1);
      int end = head.indexOf("\r\n\r\n");
      if (end >= 0) {
        channel.write(ByteBuffer.wrap(answer(head.substring(0, head.indexOf("\r\n")))));
        drop(key);
      } else if (n < 0 || !connection.request().hasRemaining()) {
        drop(key);
      }
    } catch (IOException e) {
      drop(key);
    }
  }

  private byte[] answer(String requestLine) {
    String[] parts = requestLine.split(" ");
    int status;
    String body;
    String path = parts.length == 3 ? parts[1] : "";
    int query = path.indexOf('?');
    path = query < 0 ? path : path.substring(0, query);
    BooleanSupplier check =
        "/healthz".equals(path) ? liveness : "/readyz".equals(path) ? readiness : null;
    if (parts.length != 3) {
      status = 400;
      body = "";
    } else if (check == null) {
      status = 404;
      body = "";
    } else if (!"GET".equals(parts[0]) && !"HEAD".equals(parts[0])) {
      status = 405;
      body = "";
    } else {
      boolean ok = check.getAsBoolean();
      status = ok ? 200 : 503;
      body = ok ? "ok\n" : "not ok\n";
    }
    String reason =
        switch (status) {
          case 200 -> "OK";
          case 400 -> "Bad Request";
          case 404 -> "Not Found";
          case 405 -> "Method Not Allowed";
          default -> "Service Unavailable";
        };
    boolean head = "HEAD".equals(parts[0]);
    return ("HTTP/1.1 "
            + status
            + " "
            + reason
            + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + body.length()
            + "\r\nConnection: close\r\n\r\n"
            + (head ? "" : body))
        .getBytes(StandardCharsets.US_ASCII);
  }
}

package io.kvguard.faults;

import io.kvguard.testkit.FakeEngine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine on a raw socket (127.0.0.1), for faults an HTTP server library cannot produce: a reset
 * in the middle of a body, a body that drips, headers that never come, a plain-text answer to a TLS
 * handshake. Every connection gets one answer and is closed, so each request is seen (and counted)
 * here.
 */
final class RawEngine implements AutoCloseable {

  /** Writes the whole answer to one request; may also stall, drip or reset. */
  @FunctionalInterface
  interface Behaviour {
    void answer(Socket socket, OutputStream out) throws IOException;
  }

  static final String NOT_HTTP = "<not an HTTP request>";

  private final ServerSocket server;
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          r -> {
            Thread thread = new Thread(r, "raw-engine");
            thread.setDaemon(true);
            return thread;
          });
  private final Map<String, Behaviour> routes = new ConcurrentHashMap<>();
  private final List<String> requested = new CopyOnWriteArrayList<>();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  RawEngine() throws IOException {
    this(javax.net.ServerSocketFactory.getDefault());
  }

  /** An engine behind the given socket factory, e.g. TLS with a certificate no client trusts. */
  RawEngine(javax.net.ServerSocketFactory sockets) throws IOException {
    server = sockets.createServerSocket(0, 64, InetAddress.getLoopbackAddress());
    threads.execute(this::acceptLoop);
  }

  int port() {
    return server.getLocalPort();
  }

  RawEngine route(String path, Behaviour behaviour) {
    routes.put(path, behaviour);
    return this;
  }

  RawEngine routes(Map<String, Behaviour> all) {
    routes.putAll(all);
    return this;
  }

  /**
   * Paths in the order they were requested ({@link #NOT_HTTP} for a connection that spoke something
   * else).
   */
  List<String> requested() {
    return List.copyOf(requested);
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        open.add(socket);
        threads.execute(() -> serve(socket));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket socket) {
    try (socket) {
      socket.setSoTimeout(30_000);
      String path = readRequestPath(socket.getInputStream());
      requested.add(path);
      OutputStream out = socket.getOutputStream();
      Behaviour behaviour =
          NOT_HTTP.equals(path)
              ? answer(400, "text/plain", "plain HTTP here".getBytes(StandardCharsets.US_ASCII))
              : routes.getOrDefault(
                  path,
                  answer(
                      404,
                      "application/json",
                      "{\"detail\":\"Not Found\"}".getBytes(StandardCharsets.UTF_8)));
      behaviour.answer(socket, out);
      out.flush();
    } catch (IOException e) {
      // The client hung up (timeouts, size caps and resets are what these tests provoke).
    } finally {
      open.remove(socket);
    }
  }

  /**
   * The path of the request line, or {@link #NOT_HTTP}; reads up to the blank line that ends the
   * headers.
   */
  private static String readRequestPath(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (matched < 4 && head.size() < 16_384) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.write(b);
      matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      if (head.size() == 1 && (b < 'A' || b > 'Z')) {
        return NOT_HTTP; // e.g. a TLS ClientHello starts with 0x16
      }
    }
    String text = head.toString(StandardCharsets.ISO_8859_1);
    String[] requestLine = text.split("\r\n", 2)[0].split(" ");
    if (requestLine.length != 3 || !requestLine[2].startsWith("HTTP/")) {
      return NOT_HTTP;
    }
    String target = requestLine[1];
    int query = target.indexOf('?');
    return query < 0 ? target : target.substring(0, query);
  }

  private static byte[] head(int status, String contentType, long length, String... extra) {
    StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(" Status\r\n");
    if (contentType != null) {
      head.append("Content-Type: ").append(contentType).append("\r\n");
    }
    if (length >= 0) {
      head.append("Content-Length: ").append(length).append("\r\n");
    }
    for (String header : extra) {
      head.append(header).append("\r\n");
    }
    return head.append("Connection: close\r\n\r\n")
        .toString()
        .getBytes(StandardCharsets.ISO_8859_1);
  }

  // ---- behaviours
  // -------------------------------------------------------------------------------------

  static Behaviour answer(int status, String contentType, byte[] body) {
    return (socket, out) -> {
      out.write(head(status, contentType, body.length));
      out.write(body);
    };
  }

  static Behaviour json(String body) {
    return answer(200, "application/json", body.getBytes(StandardCharsets.UTF_8));
  }

  static Behaviour prometheus(String body) {
    return answer(
        200, "text/plain; version=0.0.4; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
  }

  static Behaviour of(FakeEngine.Answer answer) {
    return answer(answer.status(), answer.contentType(), answer.body());
  }

  /** Reads nothing more and answers nothing until the client gives up. */
  static Behaviour silent() {
    return (socket, out) -> {
      while (socket.getInputStream().read() >= 0) {
        // wait for the client to close
      }
    };
  }

  /** Headers at once, then the body one byte every {@code everyMillis}. */
  static Behaviour drip(String contentType, byte[] body, long everyMillis) {
    return (socket, out) -> {
      out.write(head(200, contentType, body.length));
      out.flush();
      for (byte b : body) {
        pause(everyMillis);
        out.write(b);
        out.flush();
      }
    };
  }

  /**
   * Promises {@code body.length} bytes, sends {@code sent} of them, then resets the connection
   * (RST).
   */
  static Behaviour resetMidBody(String contentType, byte[] body, int sent) {
    return (socket, out) -> {
      out.write(head(200, contentType, body.length));
      out.write(body, 0, sent);
      out.flush();
      socket.setSoLinger(true, 0);
      socket.close();
    };
  }

  /** Promises {@code body.length} bytes, sends {@code sent} of them, then closes cleanly (FIN). */
  static Behaviour closeMidBody(String contentType, byte[] body, int sent) {
    return (socket, out) -> {
      out.write(head(200, contentType, body.length));
      out.write(body, 0, sent);
      out.flush();
      socket.shutdownOutput();
    };
  }

  /** The status line and part of a header, then nothing. */
  static Behaviour partialHeaders() {
    return (socket, out) -> {
      out.write("HTTP/1.1 200 OK\r\nContent-Ty".getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      while (socket.getInputStream().read() >= 0) {
        // hold the connection open until the client gives up
      }
    };
  }

  static Behaviour redirect(int status, String location) {
    return (socket, out) -> out.write(head(status, "text/plain", 0, "Location: " + location));
  }

  /**
   * A chunked body of {@code bytes} spaces, produced as it is sent; {@code sent} counts what got
   * out.
   */
  static Behaviour huge(String contentType, long bytes, AtomicLong sent) {
    return (socket, out) -> {
      out.write(head(200, contentType, -1, "Transfer-Encoding: chunked"));
      byte[] chunk = new byte[64 * 1024];
      java.util.Arrays.fill(chunk, (byte) ' ');
      try {
        for (long written = 0; written < bytes; written += chunk.length) {
          out.write(
              (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          sent.addAndGet(chunk.length);
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      } catch (SocketException e) {
        // The client stopped reading at its cap and closed the connection: the point of the test.
      }
    };
  }

  private static void pause(long millis) throws IOException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // nothing to do
    }
    for (Socket socket : open) {
      try {
        socket.close();
      } catch (IOException e) {
        // nothing to do
      }
    }
    threads.shutdownNow();
  }
}

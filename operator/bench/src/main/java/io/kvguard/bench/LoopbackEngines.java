package io.kvguard.bench;

import io.kvguard.testkit.FakeEngine.Answer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Many fake engine endpoints on 127.0.0.1 served by ONE selector thread. {@link
 * io.kvguard.testkit.FakeEngine} costs a JDK HttpServer (a dispatcher and a timer thread) per port,
 * which at 5,000 ports would put 10,000 threads beside the operator it is meant to measure. Answers
 * GET with keep-alive, counts requests per endpoint and path, and serves the same shapes
 * (EngineShapes) the tests use.
 */
final class LoopbackEngines implements AutoCloseable {
  private final Selector selector;
  private final List<ServerSocketChannel> listeners = new ArrayList<>();
  private final int[] ports;
  private final Map<String, byte[]>[] responses;
  private final AtomicLongArray requests;
  private final AtomicLongArray probeRequests;
  private final long[] lastProbeNanos;
  private final long[] shortestProbeGapNanos;
  private final String probePath;
  private final java.util.Set<SocketChannel> connections =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final Thread loop;
  private volatile boolean running = true;
  private volatile Runnable onProbe = () -> {};

  /**
   * One endpoint per entry of {@code shapes}; {@code probePath} is the request counted as "one
   * probe".
   */
  @SuppressWarnings("unchecked")
  LoopbackEngines(List<Map<String, Answer>> shapes, String probePath) throws IOException {
    this.probePath = probePath;
    selector = Selector.open();
    ports = new int[shapes.size()];
    responses = new Map[shapes.size()];
    requests = new AtomicLongArray(shapes.size());
    probeRequests = new AtomicLongArray(shapes.size());
    lastProbeNanos = new long[shapes.size()];
    shortestProbeGapNanos = new long[shapes.size()];
    java.util.Arrays.fill(shortestProbeGapNanos, Long.MAX_VALUE);
    Map<Map<String, Answer>, Map<String, byte[]>> rendered = new HashMap<>();
    for (int i = 0; i < shapes.size(); i++) {
      ServerSocketChannel channel = ServerSocketChannel.open();
      channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
      channel.configureBlocking(false);
      channel.register(selector, SelectionKey.OP_ACCEPT, i);
      listeners.add(channel);
      ports[i] = ((InetSocketAddress) channel.getLocalAddress()).getPort();
      responses[i] = rendered.computeIfAbsent(shapes.get(i), LoopbackEngines::render);
    }
    loop = new Thread(this::serve, "bench-engines");
    loop.setDaemon(true);
    loop.start();
  }

  int port(int endpoint) {
    return ports[endpoint];
  }

  int size() {
    return ports.length;
  }

  /** Requests for the probe path at one endpoint so far. */
  long probes(int endpoint) {
    return probeRequests.get(endpoint);
  }

  /**
   * Forgets the shortest gaps seen so far (only the selector thread writes them; a stale read is
   * harmless).
   */
  synchronized void resetProbeGaps() {
    java.util.Arrays.fill(shortestProbeGapNanos, Long.MAX_VALUE);
  }

  /**
   * The shortest time between two probe requests to one endpoint since the last reset, over all
   * endpoints (ms).
   */
  double shortestProbeGapMillis() {
    long shortest = Long.MAX_VALUE;
    for (long gap : shortestProbeGapNanos) {
      shortest = Math.min(shortest, gap);
    }
    return shortest == Long.MAX_VALUE ? Double.NaN : shortest / 1e6;
  }

  long requests(int endpoint) {
    return requests.get(endpoint);
  }

  /** Called on the engines' thread for every probe request. */
  void onProbe(Runnable listener) {
    onProbe = listener;
  }

  long[] probeSnapshot() {
    long[] copy = new long[ports.length];
    for (int i = 0; i < copy.length; i++) {
      copy[i] = probeRequests.get(i);
    }
    return copy;
  }

  long totalRequests() {
    long sum = 0;
    for (int i = 0; i < ports.length; i++) {
      sum += requests.get(i);
    }
    return sum;
  }

  private static Map<String, byte[]> render(Map<String, Answer> answers) {
    Map<String, byte[]> out = new HashMap<>();
    answers.forEach((path, answer) -> out.put(path, response(answer)));
    return out;
  }

  private static byte[] response(Answer answer) {
    String head =
        "HTTP/1.1 "
            + answer.status()
            + (answer.status() == 200 ? " OK" : " Not Found")
            + "\r\n"
            + "Content-Type: "
            + answer.contentType()
            + "\r\nContent-Length: "
            + answer.body().length
            + "\r\n\r\n";
    byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[headBytes.length + answer.body().length];
    System.arraycopy(headBytes, 0, all, 0, headBytes.length);
    System.arraycopy(answer.body(), 0, all, headBytes.length, answer.body().length);
    return all;
  }

  private static final byte[] NOT_FOUND = response(Answer.status(404));

  /** One client connection: bytes read so far and bytes still to write. */
  private static final class Connection {
    final int endpoint;
    ByteBuffer in = ByteBuffer.allocate(4096);
    final List<ByteBuffer> out = new ArrayList<>();

    Connection(int endpoint) {
      this.endpoint = endpoint;
    }
  }

  private void serve() {
    while (running) {
      try {
        selector.select(500);
        Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
        while (keys.hasNext()) {
          SelectionKey key = keys.next();
          keys.remove();
          try {
            handle(key);
          } catch (IOException | RuntimeException e) {
            // A client that went away mid-request (probe timeouts are normal); drop the connection.
            key.cancel();
            key.channel().close();
          }
        }
      } catch (IOException | java.nio.channels.ClosedSelectorException e) {
        return;
      }
    }
  }

  private void handle(SelectionKey key) throws IOException {
    if (!key.isValid()) {
      return;
    }
    if (key.isAcceptable()) {
      SocketChannel client = ((ServerSocketChannel) key.channel()).accept();
      if (client != null) {
        connections.add(client);
        client.configureBlocking(false);
        client.register(selector, SelectionKey.OP_READ, new Connection((Integer) key.attachment()));
      }
      return;
    }
    SocketChannel channel = (SocketChannel) key.channel();
    Connection connection = (Connection) key.attachment();
    if (key.isReadable()) {
      if (!connection.in.hasRemaining()) {
        ByteBuffer bigger = ByteBuffer.allocate(connection.in.capacity() * 2);
        connection.in.flip();
        bigger.put(connection.in);
        connection.in = bigger;
      }
      if (channel.read(connection.in) < 0) {
        key.cancel();
        channel.close();
        connections.remove(channel);
        return;
      }
      parseRequests(connection);
    }
    while (!connection.out.isEmpty()) {
      ByteBuffer head = connection.out.get(0);
      channel.write(head);
      if (head.hasRemaining()) {
        break;
      }
      connection.out.remove(0);
    }
    key.interestOps(
        connection.out.isEmpty()
            ? SelectionKey.OP_READ
            : SelectionKey.OP_READ | SelectionKey.OP_WRITE);
  }

  /** Answers every complete request (GETs carry no body) in the read buffer. */
  private void parseRequests(Connection connection) {
    ByteBuffer in = connection.in;
    in.flip();
    int start = 0;
    byte[] bytes = new byte[in.remaining()];
    in.get(bytes);
    for (int end = indexOfBlankLine(bytes, start); end >= 0; end = indexOfBlankLine(bytes, start)) {
      String requestLine =
          new String(bytes, start, lineEnd(bytes, start) - start, StandardCharsets.US_ASCII);
      String[] parts = requestLine.split(" ");
      String target = parts.length > 1 ? parts[1] : "/";
      int query = target.indexOf('?');
      String path = query < 0 ? target : target.substring(0, query);
      requests.incrementAndGet(connection.endpoint);
      if (path.equals(probePath)) {
        probeRequests.incrementAndGet(connection.endpoint);
        onProbe.run();
        long now = System.nanoTime();
        int e = connection.endpoint;
        if (lastProbeNanos[e] != 0) {
          shortestProbeGapNanos[e] = Math.min(shortestProbeGapNanos[e], now - lastProbeNanos[e]);
        }
        lastProbeNanos[e] = now;
      }
      byte[] answer = responses[connection.endpoint].getOrDefault(path, NOT_FOUND);
      connection.out.add(ByteBuffer.wrap(answer));
      start = end + 4;
    }
    in.clear();
    in.put(bytes, start, bytes.length - start);
  }

  private static int indexOfBlankLine(byte[] bytes, int from) {
    for (int i = from; i + 3 < bytes.length; i++) {
      if (bytes[i] == '\r'
          && bytes[i + 1] == '\n'
          && bytes[i + 2] == '\r'
          && bytes[i + 3] == '\n') {
        return i;
      }
    }
    return -1;
  }

  private static int lineEnd(byte[] bytes, int from) {
    for (int i = from; i + 1 < bytes.length; i++) {
      if (bytes[i] == '\r' && bytes[i + 1] == '\n') {
        return i;
      }
    }
    return bytes.length;
  }

  /**
   * Hangs up every client connection, as engines restarting would. The floor's HTTP client keeps
   * one idle connection per engine for 20 minutes; at 5,000 engines those would exhaust the
   * process's file descriptors.
   */
  void closeConnections() {
    for (SocketChannel channel : connections) {
      try {
        channel.close();
      } catch (IOException e) {
        // already gone
      }
      connections.remove(channel);
    }
  }

  @Override
  public void close() {
    // The loop closes nothing itself: stop it first, so the selector's key set is not closed under
    // an iteration (a ConcurrentModificationException on the loop's thread otherwise).
    running = false;
    selector.wakeup();
    try {
      loop.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      selector.close();
    } catch (IOException e) {
      // closing anyway
    }
    for (ServerSocketChannel channel : listeners) {
      try {
        channel.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}

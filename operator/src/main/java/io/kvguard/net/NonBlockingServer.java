package io.kvguard.net;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread serving every connection of a port without blocking on any of them: it accepts, hands
 * each ready connection to {@link #ready}, and after every round closes the connections {@link
 * #expired} says are done waiting. A connection that sends half a request therefore holds a buffer
 * and a slot in {@link #open}, never the thread; the subclass bounds both (closing the oldest
 * first). Not the JDK's {@code com.sun.net.httpserver}, which reads each request on one of a fixed
 * number of threads (review of issue 20: as many half-sent requests as it had threads failed the
 * kubelet's /healthz).
 */
public abstract class NonBlockingServer implements AutoCloseable {
  private final Logger log = LoggerFactory.getLogger(getClass());
  private final ServerSocketChannel server;
  private final Thread thread;
  private final int maxConnections;
  private volatile boolean closed;

  /** Where connections are registered ({@link #accepted}). */
  protected final Selector selector;

  /** Open connections, oldest first: the subclass adds each it registers. */
  protected final ArrayDeque<SelectionKey> open = new ArrayDeque<>();

  /**
   * @param maxConnections open connections kept at most; beyond, {@link #makeRoom} closes one
   */
  protected NonBlockingServer(int port, int backlog, int maxConnections, String threadName)
      throws IOException {
    this(new InetSocketAddress(port), backlog, maxConnections, threadName);
  }

  /**
   * @param address where to listen (an address of its own, e.g. KVGUARD_METRICS_BIND_ADDRESS)
   * @param maxConnections open connections kept at most; beyond, {@link #makeRoom} closes one
   */
  protected NonBlockingServer(
      InetSocketAddress address, int backlog, int maxConnections, String threadName)
      throws IOException {
    this.maxConnections = maxConnections;
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(address, backlog);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    this.thread = new Thread(this::serve, threadName);
    thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  public int port() {
    return ((InetSocketAddress) server.socket().getLocalSocketAddress()).getPort();
  }

  /**
   * A new connection: register it with {@link #selector} and add its key to {@link #open} (or close
   * it). Beyond the bound, room is made right after.
   */
  protected abstract void accepted(SocketChannel channel) throws IOException;

  /** A connection is ready to read or write. */
  protected abstract void ready(SelectionKey key);

  /** Whether a connection has had its time and is closed now. */
  protected abstract boolean expired(SelectionKey key, long nowNanos);

  /** After each round's connections were served, before expired ones are closed. */
  protected void afterRound(long nowNanos) {}

  /** Just before a connection is closed (while its key is still valid). */
  protected void dropping(SelectionKey key) {}

  /**
   * Whether a connection may be closed before the others to make room (the webhook: one that never
   * carried a whole review). All alike unless the server says otherwise.
   */
  protected boolean expendable(SelectionKey key) {
    return true;
  }

  /**
   * Makes room: closes the oldest connection of the peer (remote address) that holds the most
   * {@code weight} (connections, bytes), among the {@link #expendable} connections, and among all
   * only when none of those is left. Connections already closed this round go before either: they
   * hold nothing. Called after every accepted connection beyond the bound, and by a server with a
   * bound of its own (the webhook's buffered bytes).
   *
   * <p>Why not simply the oldest (review of issue 18): a flood of half-sent connections then closed
   * the API server's kept-alive connection, usually the oldest. Expendable first keeps a client
   * that has been served over any that has not, whatever its address (the API server's source
   * address can be shared: a node address behind SNAT, a konnectivity agent); heaviest peer first
   * makes a client that opens or fills connections push out its own. Clients that complete real
   * requests on as many connections from as many addresses can still push out others; the
   * NetworkPolicy is what keeps them out.
   */
  protected final void makeRoom(ToLongFunction<SelectionKey> weight) {
    if (open.removeIf(key -> !key.isValid())) {
      return;
    }
    SelectionKey victim = oldestOfHeaviestPeer(weight, this::expendable);
    if (victim == null) {
      victim = oldestOfHeaviestPeer(weight, key -> true);
    }
    if (victim != null) {
      open.remove(victim);
      drop(victim);
    }
  }

  /**
   * Closes the oldest connection of the peer holding the most {@code weight} among the {@code
   * eligible} ones (the status port: answers not yet taken).
   *
   * @return whether one was closed
   */
  protected final boolean makeRoomAmong(
      Predicate<SelectionKey> eligible, ToLongFunction<SelectionKey> weight) {
    open.removeIf(key -> !key.isValid());
    SelectionKey victim = oldestOfHeaviestPeer(weight, eligible);
    if (victim == null) {
      return false;
    }
    open.remove(victim);
    drop(victim);
    return true;
  }

  private SelectionKey oldestOfHeaviestPeer(
      ToLongFunction<SelectionKey> weight, Predicate<SelectionKey> eligible) {
    Map<InetAddress, Long> held = new HashMap<>();
    InetAddress heaviest = null;
    long most = -1;
    for (SelectionKey key : open) {
      InetAddress peer = peer(key);
      if (peer == null || !eligible.test(key)) {
        continue;
      }
      long total = held.merge(peer, weight.applyAsLong(key), Long::sum);
      if (total > most) {
        most = total;
        heaviest = peer;
      }
    }
    for (SelectionKey key : open) {
      if (heaviest != null && heaviest.equals(peer(key)) && eligible.test(key)) {
        return key;
      }
    }
    return null;
  }

  private static InetAddress peer(SelectionKey key) {
    if (!key.isValid()) {
      return null;
    }
    Socket socket = ((SocketChannel) key.channel()).socket();
    return socket.getInetAddress();
  }

  /** Closes a connection now; closing one that already failed is not an error. */
  protected final void drop(SelectionKey key) {
    dropping(key);
    key.cancel();
    try {
      key.channel().close();
    } catch (IOException e) {
      // Closing a connection that already failed: nothing is left to release.
      log.debug("connection close error={}", e.toString());
    }
  }

  private void serve() {
    while (!closed) {
      try {
        selector.select(1000);
        Iterator<SelectionKey> readyKeys = selector.selectedKeys().iterator();
        while (readyKeys.hasNext()) {
          SelectionKey key = readyKeys.next();
          readyKeys.remove();
          if (!key.isValid()) {
            continue;
          }
          if (key.isAcceptable()) {
            for (SocketChannel channel = server.accept();
                channel != null;
                channel = server.accept()) {
              accepted(channel);
              while (open.size() > maxConnections) {
                makeRoom(connection -> 1);
              }
            }
          } else {
            ready(key);
          }
        }
        long now = System.nanoTime();
        afterRound(now);
        open.removeIf(
            key -> {
              boolean done = !key.isValid() || expired(key, now);
              if (done) {
                drop(key);
              }
              return done;
            });
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          // One failed select, accept or connection must not end the server: the loop goes on.
          log.warn("{} error={}", thread.getName(), e.toString());
        }
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    selector.wakeup();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(2));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      for (SelectionKey key : selector.keys()) {
        key.channel().close();
      }
      selector.close();
      server.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

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
  private volatile boolean closed;

  /** Where connections are registered ({@link #accepted}). */
  protected final Selector selector;

  /** Open connections, oldest first: the subclass adds each it registers. */
  protected final ArrayDeque<SelectionKey> open = new ArrayDeque<>();

  protected NonBlockingServer(int port, int backlog, String threadName) throws IOException {
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(new InetSocketAddress(port), backlog);
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

  /** A new connection: register it with {@link #selector} and add its key to {@link #open}. */
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
   * Closes the oldest connection of the peer (remote address) that holds the most {@code weight}
   * (connections, bytes) among the open ones. One client that opens or fills connections thus
   * pushes out its own first, never a client that holds little, such as the API server's one
   * kept-alive connection or the kubelet's probe (review of issue 18: oldest first, a flood of
   * half-sent connections from one pod closed the API server's connection, the oldest). Many
   * clients that each hold as much as that one still can; the NetworkPolicy is what keeps them out.
   */
  protected final void dropFromHeaviestPeer(ToLongFunction<SelectionKey> weight) {
    Map<InetAddress, Long> held = new HashMap<>();
    InetAddress heaviest = null;
    long most = -1;
    for (SelectionKey key : open) {
      InetAddress peer = peer(key);
      if (peer == null) {
        continue;
      }
      long total = held.merge(peer, weight.applyAsLong(key), Long::sum);
      if (total > most) {
        most = total;
        heaviest = peer;
      }
    }
    for (Iterator<SelectionKey> keys = open.iterator(); keys.hasNext(); ) {
      SelectionKey key = keys.next();
      if (heaviest == null || heaviest.equals(peer(key))) {
        keys.remove();
        drop(key);
        return;
      }
    }
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

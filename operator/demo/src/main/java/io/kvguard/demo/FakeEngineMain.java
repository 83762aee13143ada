package io.kvguard.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvguard.cli.Arguments;
import io.kvguard.cli.UsageException;
import io.kvguard.testkit.FakeEngine;
import io.kvguard.testkit.FakeEngineOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * {@code fake-engine}: one engine stand-in per container, for end-to-end runs on real clusters. It
 * serves the engine answers on {@code --port} and an admin endpoint on {@code --admin-port}: {@code
 * POST /admin/restart?pool=N} records the new pool in {@code --state-file} (put it on an emptyDir,
 * which outlives container restarts) and exits, so the kubelet starts a new engine container that
 * comes back with that pool: a new container ID and restart count, exactly what a real engine
 * restart looks like.
 */
public final class FakeEngineMain implements AutoCloseable {
  private static final Set<String> VALUED =
      union(FakeEngineOptions.VALUED, Set.of("port", "admin-port", "bind", "state-file"));

  private final FakeEngine engine;
  private final HttpServer admin;
  private final FakeEngineOptions serving;
  private final Path stateFile;
  private final Runnable exit;

  private FakeEngineMain(
      FakeEngine engine,
      HttpServer admin,
      FakeEngineOptions serving,
      Path stateFile,
      Runnable exit) {
    this.engine = engine;
    this.admin = admin;
    this.serving = serving;
    this.stateFile = stateFile;
    this.exit = exit;
  }

  /**
   * The subcommand: serves until the process is stopped or restarted through the admin endpoint.
   */
  public static int run(String[] args, PrintStream out, PrintStream err)
      throws IOException, InterruptedException {
    FakeEngineMain main;
    try {
      main = start(args, () -> System.exit(0));
    } catch (UsageException e) {
      err.println("kvguard fake-engine: " + e.getMessage());
      err.println(
          "Usage: java -jar kvguard-operator.jar fake-engine --shape sglang|vllm --pool TOKENS [--ranks N]"
              + " [--context-length TOKENS] [--mode prefill|decode] [--version V] [--port 30000] [--admin-port 30001]"
              + " [--bind 0.0.0.0] [--state-file PATH]");
      return 2;
    } catch (java.net.BindException e) {
      err.println("kvguard fake-engine: cannot listen: " + e.getMessage());
      return 1;
    }
    out.println(
        "kvguard fake-engine: "
            + main.serving().shape()
            + " on port "
            + main.enginePort()
            + ", "
            + main.serving().ranks()
            + " rank(s) x "
            + main.serving().poolPerRank()
            + " tokens, context length "
            + main.serving().engineContext()
            + "; admin on port "
            + main.adminPort());
    new CountDownLatch(1).await();
    return 0;
  }

  /**
   * Starts both servers; {@code exit} is what a restart request ends with (System.exit in the
   * image).
   */
  public static FakeEngineMain start(String[] args, Runnable exit)
      throws UsageException, IOException {
    Arguments parsed = Arguments.parse(args, VALUED, Set.of());
    FakeEngineOptions options = parseOptions(parsed);
    Path stateFile = parsed.value("state-file").map(Path::of).orElse(null);
    if (stateFile != null && Files.exists(stateFile)) {
      options = options.withPool(restartedPool(stateFile));
    }
    InetAddress bind = InetAddress.getByName(parsed.value("bind").orElse("0.0.0.0"));
    int port = (int) parsed.longValue("port", 30000, 0, 65535);
    int adminPort = (int) parsed.longValue("admin-port", 30001, 0, 65535);
    FakeEngine engine = new FakeEngine(bind, port).serve(options.answers());
    HttpServer admin;
    try {
      admin = HttpServer.create(new InetSocketAddress(bind, adminPort), 8);
    } catch (IOException e) {
      engine.close();
      throw e;
    }
    FakeEngineMain main = new FakeEngineMain(engine, admin, options, stateFile, exit);
    admin.createContext("/admin/restart", main::restart);
    admin.start();
    return main;
  }

  public int enginePort() {
    return engine.port();
  }

  public int adminPort() {
    return admin.getAddress().getPort();
  }

  public FakeEngineOptions serving() {
    return serving;
  }

  private void restart(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod())) {
        reply(exchange, 405, "POST /admin/restart?pool=TOKENS");
        return;
      }
      if (stateFile == null) {
        reply(
            exchange,
            409,
            "started without --state-file: a restarted container would come back with its original pool");
        return;
      }
      long pool;
      try {
        pool = Long.parseLong(query(exchange, "pool"));
      } catch (NumberFormatException e) {
        reply(exchange, 400, "pool must be a whole number of tokens");
        return;
      }
      if (pool < 1) {
        reply(exchange, 400, "pool must be positive");
        return;
      }
      Properties state = new Properties();
      state.setProperty("pool", Long.toString(pool));
      try (OutputStream file = Files.newOutputStream(stateFile)) {
        state.store(file, "kvguard fake-engine: pool after the next start");
      }
      reply(exchange, 202, "restarting with pool " + pool);
    }
    Thread exiting = new Thread(exit, "fake-engine-restart");
    exiting.start();
  }

  private static long restartedPool(Path stateFile) throws IOException, UsageException {
    Properties state = new Properties();
    try (InputStream file = Files.newInputStream(stateFile)) {
      state.load(file);
    }
    try {
      return Long.parseLong(state.getProperty("pool", ""));
    } catch (NumberFormatException e) {
      throw new UsageException("state file " + stateFile + " holds no valid pool");
    }
  }

  private static String query(HttpExchange exchange, String name) {
    String query = exchange.getRequestURI().getRawQuery();
    if (query != null) {
      for (String pair : query.split("&")) {
        if (pair.startsWith(name + "=")) {
          return pair.substring(name.length() + 1);
        }
      }
    }
    return "";
  }

  private static void reply(HttpExchange exchange, int status, String text) throws IOException {
    byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> all = new HashSet<>(a);
    all.addAll(b);
    return Set.copyOf(all);
  }

  @Override
  public void close() {
    admin.stop(0);
    engine.close();
  }

  /**
   * The engine flags of the command line (see {@link FakeEngineOptions#toArgs()} for the reverse).
   */
  static FakeEngineOptions parseOptions(Arguments args) throws UsageException {
    String shape = args.value("shape").orElse("sglang");
    if (!FakeEngineOptions.SHAPES.contains(shape)) {
      throw new UsageException("--shape must be sglang or vllm, was '" + shape + "'");
    }
    if (args.value("pool").isEmpty()) {
      throw new UsageException("--pool is required (KV pool per rank, in tokens)");
    }
    long pool = args.longValue("pool", 0, 1, Long.MAX_VALUE / 1024);
    int ranks = (int) args.longValue("ranks", 1, 1, 64);
    long context = args.longValue("context-length", 1_048_576, 1, Long.MAX_VALUE / 1024);
    String mode = args.value("mode").orElse(null);
    if (mode != null && !Set.of("prefill", "decode").contains(mode)) {
      throw new UsageException(
          "--mode must be prefill or decode (omit it for a unified engine), was '" + mode + "'");
    }
    String version = args.value("version").orElse(shape.equals("sglang") ? "0.5.22" : "0.11.0");
    return new FakeEngineOptions(shape, pool, ranks, context, mode, version);
  }
}

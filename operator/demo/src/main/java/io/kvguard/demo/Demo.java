package io.kvguard.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import io.kvguard.cli.Arguments;
import io.kvguard.cli.UsageException;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.gate.GateNames;
import io.kvguard.testkit.FakeEngineOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.slf4j.LoggerFactory;

/**
 * {@code demo}: the GLM-5.3 incident replayed against the real operator on an in-process API
 * server. The prefill engines report 681,280 tokens against a 1,048,576-token window and are kept
 * out of traffic; then they restart with 2,040,000 tokens and the gates open. Prints what kubectl
 * would show as it happens, checks each expected state (exit 1 with the last state seen if one is
 * not reached in time), and exits 0.
 */
public final class Demo {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final String NS = DemoCluster.NAMESPACE;
  private static final String MD = DemoCluster.MODEL_DEPLOYMENT;

  /**
   * Held so the level set on it survives garbage collection (java.util.logging keeps loggers
   * weakly).
   */
  private static final java.util.logging.Logger MOCK_SERVER_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  private final boolean keepRunning;
  private final Duration timeout;
  private final Clock clock = Clock.systemUTC();
  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private final CountDownLatch finished = new CountDownLatch(1);

  /** An expected state of the cluster, described in the words the failure message will use. */
  private record Expectation(String description, Predicate<ClusterSnapshot> holds) {}

  public Demo(boolean keepRunning, Duration timeout) {
    this.keepRunning = keepRunning;
    this.timeout = timeout;
  }

  /** The subcommand: {@code demo [--keep-running] [--verbose]}. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Arguments parsed;
    try {
      parsed = Arguments.parse(args, Set.of(), Set.of("keep-running", "verbose"));
    } catch (UsageException e) {
      err.println("kvguard demo: " + e.getMessage());
      err.println("Usage: java -jar kvguard-operator.jar demo [--keep-running] [--verbose]");
      err.println("  --keep-running  stay up after the replay and print a kubeconfig for kubectl");
      err.println("  --verbose       interleave the operator's and the embedded API server's logs");
      return 2;
    }
    if (!parsed.flag("verbose")) {
      quietLogs();
    }
    Demo demo = new Demo(parsed.flag("keep-running"), DEFAULT_TIMEOUT);
    Runtime.getRuntime().addShutdownHook(new Thread(demo::stopAndWait, "kvguard-demo-stop"));
    return demo.run(out);
  }

  /**
   * The demo's own lines say what the operator did; the operator's log, the embedded server's
   * request log and JOSDK's retry warnings would bury them. {@code --verbose} keeps them all.
   */
  private static void quietLogs() {
    ((Logger) LoggerFactory.getLogger("io.kvguard")).setLevel(Level.WARN);
    ((Logger) LoggerFactory.getLogger("io.javaoperatorsdk")).setLevel(Level.ERROR);
    ((Logger) LoggerFactory.getLogger("io.fabric8")).setLevel(Level.ERROR);
    MOCK_SERVER_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  /** Asks a running demo to stop (Ctrl-C with --keep-running) and waits for it to clean up. */
  public void stopAndWait() {
    stopRequested.countDown();
    try {
      finished.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Runs the demo, printing to {@code out}; 0 when every expected state was reached, 1 otherwise.
   */
  public int run(PrintStream out) {
    Instant start = clock.instant();
    try (DemoCluster cluster = DemoCluster.create()) {
      return replay(cluster, out, start);
    } catch (IOException | RuntimeException e) {
      out.println();
      out.println("kvguard demo FAILED: " + e);
      return 1;
    } finally {
      out.flush();
      finished.countDown();
    }
  }

  private int replay(DemoCluster cluster, PrintStream out, Instant start) throws IOException {
    KubectlView view =
        new KubectlView(
            PrinterColumns.fromGeneratedCrd(cluster.client.getKubernetesSerialization()),
            cluster.client.getKubernetesSerialization());
    ChangeFeed feed = new ChangeFeed(start);
    out.println(
        "kvguard demo: the GLM-5.3 incident, replayed and fixed, with no cluster. Running in this process:");
    out.println(
        "a Kubernetes API server (fabric8's mock server, CRUD mode) at " + cluster.api.url() + ",");
    out.println(
        "fake SGLang engines on 127.0.0.1 answering /server_info in SGLang 0.5.x's shape, and the kvguard");
    out.println(
        "operator wired as in production. Only the kubelet is simulated (pods Running, engine restarts).");
    out.println();
    heading(out, "Setup");
    for (String pod : DemoCluster.PREFILL_PODS) {
      cluster.enginePod(pod, "prefill", DemoCluster.prefill(DemoCluster.INCIDENT_PREFILL_POOL));
    }
    for (String pod : DemoCluster.DECODE_PODS) {
      cluster.enginePod(pod, "decode", DemoCluster.decode());
    }
    out.println(
        "  CRD modeldeployments.kvguard.io applied (the one the build generated), namespace "
            + NS
            + " created");
    out.println(
        "  pods "
            + String.join(", ", DemoCluster.PREFILL_PODS)
            + ": SGLang prefill, "
            + describe(DemoCluster.prefill(DemoCluster.INCIDENT_PREFILL_POOL))
            + "   <- the incident's pool");
    out.println(
        "  pods "
            + String.join(", ", DemoCluster.DECODE_PODS)
            + ": SGLang decode, "
            + describe(DemoCluster.decode()));
    out.println("  every pod declares the readiness gate kvguard.io/pool-verified");
    ModelDeployment md = DemoCluster.incidentModelDeployment();
    out.println(
        "  engineAdvisories: Disabled below: these engines report SGLang 0.5.22, which only the incident's");
    out.println(
        "  post-mortem names as fixed (sgl-project/sglang PR #33508 is in no tag read). With advisories on,");
    out.println(
        "  kvguard keeps every prefill/decode pod shut as KnownUnsafeEngine until the path is proven through");
    out.println(
        "  the router; this team tested the route by hand (kvguard check --rejection-probe --pd-router) and");
    out.println("  accepts that risk knowingly, so the demo shows the pool check alone.");
    out.println();
    out.println("$ kubectl apply -f - <<EOF");
    out.print(cluster.client.getKubernetesSerialization().asYaml(md).replaceFirst("^---\\n", ""));
    out.println("EOF");
    cluster.apply(md);
    cluster.startOperator();
    out.println("  operator started (one replica, leader election off)");
    out.println();

    heading(
        out,
        "1. The incident: kvguard asks every engine for its real pool (changes as they happen)");
    Optional<ClusterSnapshot> gated = watchUntil(cluster, feed, out, incidentGated());
    if (gated.isEmpty()) {
      return failed(out, view, feed, cluster, incidentGated());
    }
    out.println();
    snapshot(out, view, feed, gated.get());
    out.println(
        "  The prefill pools cannot hold a 1048576-token prompt, so both prefill pods stay out of traffic");
    out.println(
        "  and the model is not Ready. The decode pods passed and are labelled for routing. (On a real");
    out.println(
        "  cluster the kubelet keeps a pod whose gate is False NotReady, so Services send it nothing.)");
    out.println();

    heading(
        out,
        "2. The fix: both prefill engines restart with "
            + describe(DemoCluster.prefill(DemoCluster.FIXED_PREFILL_POOL)));
    for (String pod : DemoCluster.PREFILL_PODS) {
      cluster.restartEngine(pod, DemoCluster.prefill(DemoCluster.FIXED_PREFILL_POOL));
    }
    Optional<ClusterSnapshot> fixed = watchUntil(cluster, feed, out, allVerified());
    if (fixed.isEmpty()) {
      return failed(out, view, feed, cluster, allVerified());
    }
    out.println();
    snapshot(out, view, feed, fixed.get());

    heading(out, "Result");
    out.println(
        "  Before the fix: prefill refused with PoolTooSmall (681280 < 1048576), Ready=False, traffic kept away.");
    out.println(
        "  After the engines restarted with 2040000 tokens per rank, kvguard re-measured the new processes,");
    out.println(
        "  opened every gate and set Ready=True. Every state above was checked, not just printed.");
    if (keepRunning) {
      keepServing(cluster, feed, out);
    }
    return 0;
  }

  private static String describe(FakeEngineOptions engine) {
    return engine.ranks()
        + " data-parallel ranks x "
        + engine.poolPerRank()
        + " tokens, engine context length "
        + engine.engineContext();
  }

  private static Expectation incidentGated() {
    return new Expectation(
        "both prefill pods gated False with PoolTooSmall, both decode pods True with"
            + " PoolSufficient and labelled, status verified 2/4 and Ready=False, the PoolTooSmall event counting both prefill pods",
        s ->
            DemoCluster.PREFILL_PODS.stream()
                    .allMatch(p -> s.gateIs(p, "False", "PoolTooSmall") && !s.isLabelled(p))
                && s.eventCount("PoolTooSmall") == DemoCluster.PREFILL_PODS.size()
                && DemoCluster.DECODE_PODS.stream()
                    .allMatch(p -> s.gateIs(p, "True", "PoolSufficient") && s.isLabelled(p))
                && s.modelDeployment(MD)
                    .filter(md -> md.getStatus() != null && "2/4".equals(md.getStatus().verified))
                    .isPresent()
                && s.condition(MD, "Ready").filter("False"::equals).isPresent());
  }

  private static Expectation allVerified() {
    return new Expectation(
        "every pod True with PoolSufficient and labelled, the prefill verdicts about the"
            + " restarted containers with pool "
            + DemoCluster.FIXED_PREFILL_POOL
            + ", Ready=True and PoolsVerified=True",
        s ->
            DemoCluster.PREFILL_PODS.stream()
                    .allMatch(
                        p ->
                            s.gateIs(p, "True", "PoolSufficient")
                                && s.isLabelled(p)
                                && s.verdict(MD, p)
                                    .filter(
                                        v ->
                                            Integer.valueOf(1).equals(v.restartCount)
                                                && Long.valueOf(DemoCluster.FIXED_PREFILL_POOL)
                                                    .equals(v.poolTokens))
                                    .isPresent())
                && DemoCluster.DECODE_PODS.stream()
                    .allMatch(p -> s.gateIs(p, "True", "PoolSufficient") && s.isLabelled(p))
                && s.condition(MD, "Ready").filter("True"::equals).isPresent()
                && s.condition(MD, "PoolsVerified").filter("True"::equals).isPresent());
  }

  /** Prints every change until the expectation holds; empty when the deadline passes first. */
  private Optional<ClusterSnapshot> watchUntil(
      DemoCluster cluster, ChangeFeed feed, PrintStream out, Expectation expectation) {
    Instant deadline = clock.instant().plus(timeout);
    while (true) {
      ClusterSnapshot snapshot = ClusterSnapshot.read(cluster.client, NS, clock.instant());
      feed.changes(snapshot).forEach(out::println);
      if (expectation.holds().test(snapshot)) {
        return Optional.of(snapshot);
      }
      if (!clock.instant().isBefore(deadline) || pause()) {
        return Optional.empty();
      }
    }
  }

  /** Waits one poll interval; true when the demo was asked to stop meanwhile. */
  private boolean pause() {
    try {
      return stopRequested.await(POLL.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  private int failed(
      PrintStream out,
      KubectlView view,
      ChangeFeed feed,
      DemoCluster cluster,
      Expectation expected) {
    out.println();
    out.println(
        "kvguard demo FAILED: not reached within "
            + timeout.toSeconds()
            + " s: "
            + expected.description()
            + ".");
    out.println("Last state seen:");
    snapshot(out, view, feed, ClusterSnapshot.read(cluster.client, NS, clock.instant()));
    return 1;
  }

  private static void snapshot(
      PrintStream out, KubectlView view, ChangeFeed feed, ClusterSnapshot snapshot) {
    out.println(view.modelDeployments(snapshot, NS));
    out.println(view.pods(snapshot, NS));
    out.println(view.describe(snapshot, NS, MD, feed.eventOrder()));
  }

  private static void heading(PrintStream out, String title) {
    out.println("== " + title);
  }

  /** --keep-running: a kubeconfig for kubectl, and the change feed until Ctrl-C. */
  private void keepServing(DemoCluster cluster, ChangeFeed feed, PrintStream out)
      throws IOException {
    AtomicReference<ClusterSnapshot> latest =
        new AtomicReference<>(ClusterSnapshot.readAll(cluster.client, clock.instant()));
    new KubectlTables(
            () -> latest.get().at(clock.instant()),
            PrinterColumns.fromGeneratedCrd(cluster.client.getKubernetesSerialization()),
            cluster.client.getKubernetesSerialization(),
            feed.eventOrder())
        .install(cluster.api);
    Path kubeconfig = DemoKubeconfig.write(cluster.api.url(), NS);
    try {
      out.println();
      heading(out, "Still running (--keep-running). From another terminal:");
      out.println("  export KUBECONFIG=" + kubeconfig);
      for (String command :
          List.of(
              "get mdep",
              "get pods -o wide -L " + GateNames.VERIFIED_LABEL,
              "get events",
              "get mdep " + MD + " -o yaml",
              "patch mdep "
                  + MD
                  + " --type merge -p '{\"spec\":{\"minPoolRatio\":3}}'"
                  + "    # 2040000 < 3 x 1048576: the prefill gates close")) {
        out.println("  kubectl " + command);
      }
      out.println("  Changes are printed below as they happen. Ctrl-C stops the demo.");
      out.flush();
      while (!pause()) {
        feed.changes(ClusterSnapshot.read(cluster.client, NS, clock.instant()))
            .forEach(out::println);
        latest.set(ClusterSnapshot.readAll(cluster.client, clock.instant()));
        out.flush();
      }
    } finally {
      java.nio.file.Files.deleteIfExists(kubeconfig);
    }
  }
}

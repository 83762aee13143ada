package io.kvguard.cli;

import io.kvguard.customresource.Engine;
import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.SecretKeyRef;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.probe.EngineHttp;
import io.kvguard.probe.EngineProbe;
import io.kvguard.probe.EngineProbes;
import io.kvguard.probe.EngineRejection;
import io.kvguard.probe.PdRouterProbe;
import io.kvguard.probe.RejectionProbe;
import io.kvguard.probe.SentMarkers;
import io.kvguard.probe.WireCapture;
import io.kvguard.reconciler.RolePolicies;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolJudge;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolPolicy;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.ProbeOutcome;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code check}: preflight one live engine before a rollout, with the probe and the verdict
 * function the operator uses, so a pipeline and the operator can never disagree about the same
 * engine.
 */
public final class CheckCommand {
  public static final int EXIT_VERIFIED = 0;
  public static final int EXIT_REFUSED = 1;
  public static final int EXIT_FAILED = 2;

  private static final Set<String> VALUED =
      Set.of(
          "engine",
          "url",
          "context-window",
          "min-pool-ratio",
          "timeout-seconds",
          "output",
          "margin-tokens",
          "model",
          "model-deployment",
          "role",
          "metrics-port",
          "api-key-file",
          "record",
          "register-prefill",
          "register-decode");
  private static final Set<String> FLAGS =
      Set.of("allow-engine-context-above-pool", "help", "rejection-probe", "pd-router");

  /** The workers added to a proof router: each flag names one, and may be given again. */
  private static final List<String> REGISTER = List.of("register-prefill", "register-decode");

  /**
   * The rejection probe's deadline without --timeout-seconds: the CRD's
   * rejectionProbe.timeoutSeconds default.
   */
  static final int REJECTION_TIMEOUT_SECONDS = 30;

  private final EngineProbes probes;
  private final RejectionProbe rejectionProbe;

  /**
   * Where the standard probes send, tapped for each run; null when the probes were given, which
   * then cannot {@code --record} nor tell a refused key from another failure.
   */
  private final EngineHttp http;

  /**
   * Where {@code --register-prefill}/{@code --register-decode} read the workers' admission figures
   * and reach the proof router's worker API: {@link #http}'s run tap when there is one.
   */
  private final EngineHttp routerHttp;

  public CheckCommand(EngineProbes probes) {
    this(probes, new RejectionProbe(EngineHttp.createDefault()));
  }

  public CheckCommand(EngineProbes probes, RejectionProbe rejectionProbe) {
    this.probes = probes;
    this.rejectionProbe = rejectionProbe;
    this.http = null;
    this.routerHttp = EngineHttp.createDefault();
  }

  /** The standard probes over {@code http}, every request of a run seen by its wire capture. */
  public CheckCommand(EngineHttp http) {
    this.probes = EngineProbes.standard(http);
    this.rejectionProbe = new RejectionProbe(http);
    this.http = http;
    this.routerHttp = http;
  }

  /**
   * The probes exactly as the operator builds them (no redirects, bounded bodies, one deadline).
   */
  public static CheckCommand standard() {
    return new CheckCommand(EngineHttp.createDefault());
  }

  /**
   * What the user asked for, validated.
   *
   * @param role the role whose policy is judged: from {@code --model-deployment}, or built from the
   *     flags
   * @param rejection the rejection probe's settings, or null when it was not asked for
   * @param apiKey from {@code --api-key-file}
   * @param keyFrom with {@code --model-deployment} whose probe names an authSecretRef, the command
   *     that writes its key to a file
   * @param record {@code --record}'s directory
   */
  record Request(
      RoleSpec role,
      URI baseUri,
      PoolPolicy policy,
      Duration timeout,
      boolean json,
      Rejection rejection,
      Optional<Integer> metricsPort,
      Optional<ApiKeyFile> apiKey,
      Optional<String> keyFrom,
      Optional<Path> record) {
    Engine engine() {
      return role.getEngine();
    }

    Optional<String> bearerToken() {
      return apiKey.map(ApiKeyFile::key);
    }
  }

  /**
   * {@code --rejection-probe} and its options; the same prompt sizing and recognition as the
   * operator's.
   *
   * @param register the workers {@code --register-prefill} and {@code --register-decode} add to the
   *     proof router at {@code --url} for the proof; empty when the router has its own
   */
  record Rejection(
      long marginTokens,
      String model,
      EngineRejection.Route route,
      Duration timeout,
      List<RegisteredWorker.Named> register) {}

  /**
   * @return 0 verified, 1 refused, 2 probe failed or usage error
   */
  public int run(String[] args, PrintStream out, PrintStream err) {
    Request request;
    try {
      refuseKeyValues(args);
      Arguments parsed = Arguments.parse(args, VALUED, FLAGS, Set.copyOf(REGISTER));
      if (parsed.flag("help")) {
        out.print(usage());
        return EXIT_VERIFIED;
      }
      request = request(parsed);
    } catch (UsageException e) {
      err.println("kvguard check: " + e.getMessage());
      err.print(usage());
      return EXIT_FAILED;
    }
    if (request.record().isPresent() && http == null) {
      err.println("kvguard check: --record needs the standard probes");
      return EXIT_FAILED;
    }
    // Every request of this run is kept: to write a record, and to tell a user whose engine
    // refused the credentials (or asked for some) why.
    WireCapture capture = new WireCapture();
    EngineProbes probes = http == null ? this.probes : EngineProbes.standard(http.tapped(capture));
    // A run knows its own prompts' markers only (preflight.md): a command run again, against
    // another engine, must not take the first run's marker for another probe's in this one.
    SentMarkers runMarkers = new SentMarkers();
    RejectionProbe rejectionProbe =
        http == null
            ? this.rejectionProbe.withMarkers(runMarkers)
            : new RejectionProbe(
                http.tapped(capture), this.rejectionProbe.maxPromptTokens(), runMarkers);
    EngineProbe probe;
    try {
      probe =
          request.role().getGeneric() == null
              ? probes.forEngine(request.engine())
              : probes.forRole(request.role());
    } catch (IllegalStateException e) {
      err.println("kvguard check: " + e.getMessage());
      return EXIT_FAILED;
    }
    if (request.rejection() != null && !request.rejection().register().isEmpty()) {
      ProofRouterCheck.Result route =
          ProofRouterCheck.run(
              probe,
              new PdRouterProbe(
                  http == null ? routerHttp : routerHttp.tapped(capture), rejectionProbe),
              request);
      return report(
          args,
          out,
          err,
          request,
          capture,
          CheckReport.throughRouter(
              request,
              CredentialHints.explain(route.verdict(), capture, request),
              route.rejection(),
              route.workers()));
    }
    // As the operator asks: every request of one probe shares one deadline, and metrics come from
    // the metrics port.
    EngineEndpoint endpoint =
        new EngineEndpoint(request.baseUri(), request.timeout(), request.bearerToken());
    if (request.metricsPort().isPresent()) {
      endpoint = endpoint.withMetricsPort(request.metricsPort().get());
    }
    ProbeOutcome outcome = probe.probe(endpoint.startingNow());
    PoolVerdict verdict = PoolJudge.judge(request.policy(), outcome);
    RejectionCheck rejection = null;
    if (request.rejection() != null
        && verdict.verified()
        && outcome instanceof ProbeOutcome.Observed observed) {
      rejection = rejectionCheck(rejectionProbe, probe, request, observed.observation());
      verdict = rejection.verdict(verdict);
    }
    verdict = CredentialHints.explain(verdict, capture, request);
    return report(
        args, out, err, request, capture, CheckReport.of(request, outcome, verdict, rejection));
  }

  /** Prints the report, and writes the record when asked; the exit code. */
  private static int report(
      String[] args,
      PrintStream out,
      PrintStream err,
      Request request,
      WireCapture capture,
      CheckReport report) {
    SecretRedaction redaction = redaction(request);
    out.print(redaction.text(request.json() ? report.json() : report.text()));
    out.flush();
    if (request.record().isPresent()) {
      try {
        CheckRecord.write(
            request.record().get(),
            List.of(args),
            request.engine().wireName(),
            capture.exchanges(),
            report.json(),
            redaction);
      } catch (IOException e) {
        err.println(
            "kvguard check: --record "
                + request.record().get()
                + " could not be written: "
                + e.getClass().getSimpleName()
                + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
        return EXIT_FAILED;
      }
    }
    return report.exitCode();
  }

  /**
   * An engine may echo the key (in an error, a debug page); a key shorter than {@link
   * SecretRedaction#MIN_SECRET_CHARS} is left in the text, as blanking it would blank ordinary
   * words.
   */
  private static SecretRedaction redaction(Request request) {
    return request
        .bearerToken()
        .filter(key -> key.length() >= SecretRedaction.MIN_SECRET_CHARS)
        .map(SecretRedaction::of)
        .orElse(SecretRedaction.none());
  }

  /**
   * A key given as a value would show in {@code ps} and in shell history; the parser's own error
   * would quote the word after it.
   */
  private static void refuseKeyValues(String[] args) throws UsageException {
    for (String word : args) {
      if (word.equals("--api-key") || word.startsWith("--api-key=")) {
        throw new UsageException(
            "--api-key is not accepted: use --api-key-file FILE (a value on the command line shows"
                + " in ps and in shell history)");
      }
    }
  }

  /**
   * What the rejection probe sent and what came back; {@code outcome} is null when no prompt size
   * could be had.
   */
  record RejectionCheck(long promptTokens, RejectionOutcome outcome) {
    PoolVerdict verdict(PoolVerdict poolVerdict) {
      return outcome == null
          ? new PoolVerdict(
              Verdict.Unknown,
              GateReason.ProbeFailed,
              "rejection probe: the engine's figures leave no prompt size above its admission limit")
          : RejectionJudge.judge(poolVerdict, outcome);
    }
  }

  private static RejectionCheck rejectionCheck(
      RejectionProbe rejectionProbe,
      EngineProbe probe,
      Request request,
      PoolObservation observation) {
    long promptTokens;
    try {
      promptTokens = RejectionJudge.promptTokens(observation, request.rejection().marginTokens());
    } catch (ArithmeticException e) {
      return new RejectionCheck(-1, null);
    }
    EngineEndpoint endpoint =
        new EngineEndpoint(request.baseUri(), request.rejection().timeout(), request.bearerToken());
    return new RejectionCheck(
        promptTokens,
        rejectionProbe.send(
            probe.rejection(),
            request.engine().wireName(),
            endpoint.startingNow(),
            promptTokens,
            request.rejection().model(),
            observation,
            request.rejection().route()));
  }

  Request request(Arguments args) throws UsageException {
    URI baseUri = baseUri(args.required("url"));
    String output = args.value("output").orElse("text");
    if (!output.equals("text") && !output.equals("json")) {
      throw new UsageException("--output must be text or json, was '" + output + "'");
    }
    Optional<Long> timeout =
        args.flag("timeout-seconds")
            ? Optional.of(args.longValue("timeout-seconds", 5, 1, 300))
            : Optional.empty();
    PreflightSpec preflight =
        args.value("model-deployment").isPresent()
            ? PreflightSpec.fromFile(args)
            : PreflightSpec.fromFlags(args);
    ModelDeploymentSpec spec = preflight.spec();
    RoleSpec role = preflight.role();
    PoolPolicy policy = RolePolicies.of(spec, role);
    Duration probeTimeout =
        Duration.ofSeconds(
            timeout.orElse(
                preflight.fromFile()
                    ? (long) spec.effectiveProbe().effectiveTimeoutSeconds()
                    : 5L));
    if (preflight.fromFile() && !role.effectiveScheme().wireName().equals(baseUri.getScheme())) {
      throw new UsageException(
          "--url is "
              + baseUri.getScheme()
              + " but role "
              + role.getName()
              + " is probed over "
              + role.effectiveScheme().wireName()
              + " (its scheme)");
    }
    Optional<ApiKeyFile> apiKey =
        args.value("api-key-file").isPresent()
            ? Optional.of(ApiKeyFile.read(args.value("api-key-file").get()))
            : Optional.empty();
    SecretKeyRef secretRef = preflight.fromFile() ? spec.effectiveProbe().getAuthSecretRef() : null;
    Optional<String> keyFrom =
        secretRef == null
            ? Optional.empty()
            : Optional.of(
                ApiKeyFile.kubectlCommand(
                    secretRef,
                    preflight.namespace(),
                    "--model-deployment " + args.value("model-deployment").orElseThrow()));
    if (keyFrom.isPresent() && apiKey.isEmpty()) {
      // The operator sends this key: a check without it would ask the engine something else.
      throw new UsageException(
          "--model-deployment: its probe.authSecretRef names the engine's API key; write it to a"
              + " file with "
              + keyFrom.get()
              + " and pass --api-key-file api-key");
    }
    Optional<Path> record =
        args.value("record").isPresent()
            ? Optional.of(CheckRecord.target(args.value("record").get()))
            : Optional.empty();
    if (record.isPresent()
        && apiKey.isPresent()
        && apiKey.get().key().length() < SecretRedaction.MIN_SECRET_CHARS) {
      throw new UsageException(
          "--record: the key in --api-key-file "
              + apiKey.get().file()
              + " is shorter than "
              + SecretRedaction.MIN_SECRET_CHARS
              + " characters, too short to redact reliably from a record (it would also match"
              + " ordinary text); record with a longer key");
    }
    Rejection rejection = rejection(args, preflight, timeout);
    if (rejection != null && rejection.route() == EngineRejection.Route.PD_ROUTER) {
      // Through the router the probe measures the path a claimed fixed release cannot vouch for.
      policy = policy.decidedByRouterProbe();
    }
    return new Request(
        role,
        baseUri,
        policy,
        probeTimeout,
        output.equals("json"),
        rejection,
        metricsPort(args, preflight),
        apiKey,
        keyFrom,
        record);
  }

  /**
   * Where the engine serves its metrics pages, when not on --url's port: {@code --metrics-port}, or
   * with {@code --model-deployment} the role's metricsPort. A metricsPort naming a container port
   * needs the number from {@code --metrics-port} (check sees no pod to resolve it in); one the spec
   * does not name would make check read where the operator does not.
   */
  private static Optional<Integer> metricsPort(Arguments args, PreflightSpec preflight)
      throws UsageException {
    Optional<Integer> flag =
        args.flag("metrics-port")
            ? Optional.of((int) args.longValue("metrics-port", 0, 1, 65_535))
            : Optional.empty();
    if (!preflight.fromFile()) {
      return flag;
    }
    var declared = preflight.role().getMetricsPort();
    if (declared == null) {
      if (flag.isPresent()) {
        throw new UsageException(
            "--metrics-port: role "
                + preflight.role().getName()
                + " names no metricsPort, so the"
                + " operator reads metrics on its port");
      }
      return Optional.empty();
    }
    if (flag.isPresent()) {
      return flag;
    }
    if (declared.getIntVal() == null) {
      throw new UsageException(
          "role "
              + preflight.role().getName()
              + " reads metrics on the container port named "
              + declared.getStrVal()
              + ": give its number (or its forwarded port) with --metrics-port");
    }
    return Optional.of(declared.getIntVal());
  }

  /**
   * With {@code --model-deployment}, the rejection probe runs as the spec asks (or when {@code
   * --rejection-probe} is given), with the spec's margin, model and deadline unless the flags say
   * otherwise.
   */
  private Rejection rejection(Arguments args, PreflightSpec preflight, Optional<Long> timeout)
      throws UsageException {
    RejectionProbeSpec fromSpec =
        preflight.fromFile() ? preflight.spec().effectiveRejectionProbe() : null;
    boolean asked =
        args.flag("rejection-probe") || (fromSpec != null && fromSpec.effectiveEnabled());
    for (String option : REGISTER) {
      if (args.flag(option) && !args.flag("pd-router")) {
        throw new UsageException(
            "--"
                + option
                + " needs --pd-router: it adds the worker to the proof router at --url for the"
                + " proof, and removes it afterwards");
      }
    }
    if (!asked) {
      for (String option : List.of("margin-tokens", "model", "pd-router")) {
        if (args.flag(option)) {
          throw new UsageException("--" + option + " needs --rejection-probe");
        }
      }
      return null;
    }
    // The CRD's bounds and default for spec.rejectionProbe.marginTokens.
    long margin =
        args.longValue(
            "margin-tokens", fromSpec == null ? 1 : fromSpec.effectiveMarginTokens(), 1, 1_048_576);
    String model =
        args.value("model").orElse(preflight.fromFile() ? preflight.spec().getModel() : null);
    Engine engine = preflight.role().getEngine();
    Optional<EngineRejection> knowledge = rejectionOf(engine);
    Optional<String> namedBy = knowledge.flatMap(EngineRejection::modelNamedBy);
    if (namedBy.isPresent() && (model == null || model.isBlank())) {
      throw new UsageException(
          "--rejection-probe on "
              + engine.wireName()
              + " needs --model (the served model name "
              + namedBy.get()
              + " expects)");
    }
    if (args.flag("pd-router")
        && !knowledge.map(r -> r.takes(EngineRejection.Route.PD_ROUTER)).orElse(false)) {
      throw new UsageException("--pd-router is for " + pdRouters());
    }
    long deadline =
        timeout.orElse(
            (long)
                (fromSpec == null
                    ? REJECTION_TIMEOUT_SECONDS
                    : fromSpec.effectiveTimeoutSeconds()));
    return new Rejection(
        margin,
        model == null ? "" : model.strip(),
        args.flag("pd-router") ? EngineRejection.Route.PD_ROUTER : EngineRejection.Route.POD,
        Duration.ofSeconds(deadline),
        register(args));
  }

  /**
   * The workers to add to the proof router: at least one of each type (the router routes a prompt
   * to a prefill and a decode worker, and answers its own 503 without either), each at its own
   * root, none twice, none the router itself.
   */
  private static List<RegisteredWorker.Named> register(Arguments args) throws UsageException {
    List<RegisteredWorker.Named> workers = new java.util.ArrayList<>();
    for (String option : REGISTER) {
      for (String raw : args.values(option)) {
        workers.add(
            new RegisteredWorker.Named(
                option.substring("register-".length()), rootUri(option, raw)));
      }
    }
    if (workers.isEmpty()) {
      return List.of();
    }
    for (String option : REGISTER) {
      if (args.values(option).isEmpty()) {
        throw new UsageException(
            "--register-prefill and --register-decode go together: the proof router sends each"
                + " prompt to a prefill and a decode worker, so it needs one of each");
      }
    }
    Set<URI> seen = new java.util.HashSet<>();
    seen.add(baseUri(args.required("url")));
    for (RegisteredWorker.Named worker : workers) {
      if (!seen.add(worker.url())) {
        throw new UsageException(
            worker.flag() + " " + worker.url() + " is named twice (or is --url, the router)");
      }
    }
    return List.copyOf(workers);
  }

  private Optional<EngineRejection> rejectionOf(Engine engine) {
    try {
      return probes.forEngine(engine).rejection();
    } catch (IllegalStateException e) {
      return Optional.empty();
    }
  }

  /**
   * The engines whose rejection probe can go through a prefill/decode router, as the usage error
   * names them.
   */
  private String pdRouters() {
    return Arrays.stream(Engine.values())
        .flatMap(
            engine ->
                rejectionOf(engine)
                    .filter(r -> r.takes(EngineRejection.Route.PD_ROUTER))
                    .map(
                        r ->
                            r.engineName()
                                + "'s prefill/decode router (--engine "
                                + engine.wireName()
                                + ")")
                    .stream())
        .collect(Collectors.joining(" or "));
  }

  static Engine engine(String name) throws UsageException {
    for (Engine engine : Engine.values()) {
      if (engine.wireName().equals(name.strip().toLowerCase(Locale.ROOT))) {
        return engine;
      }
    }
    throw new UsageException("--engine must be one of " + engineNames() + ", was '" + name + "'");
  }

  private static String engineNames() {
    return Arrays.stream(Engine.values()).map(Engine::wireName).collect(Collectors.joining(", "));
  }

  /**
   * Probes read fixed paths at the engine's root, so anything beyond scheme, host and port would be
   * ignored.
   */
  static URI baseUri(String raw) throws UsageException {
    return rootUri("url", raw);
  }

  /** {@link #baseUri} for the value of {@code --option}. */
  private static URI rootUri(String option, String raw) throws UsageException {
    URI uri;
    try {
      uri = new URI(raw.strip());
    } catch (java.net.URISyntaxException e) {
      throw new UsageException("--" + option + " is not a valid URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new UsageException(
          "--" + option + " must start with http:// or https://, was '" + raw + "'");
    }
    if (uri.getHost() == null) {
      throw new UsageException("--" + option + " has no host: '" + raw + "'");
    }
    if (uri.getRawUserInfo() != null) {
      throw new UsageException("--" + option + " must not carry credentials");
    }
    boolean rootPath =
        uri.getRawPath() == null || uri.getRawPath().isEmpty() || uri.getRawPath().equals("/");
    if (!rootPath || uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new UsageException(
          "--"
              + option
              + " must be the engine's root (scheme, host and port only), was '"
              + raw
              + "'");
    }
    return URI.create(scheme + "://" + uri.getRawAuthority());
  }

  static String usage() {
    return """
        Usage: java -jar kvguard-operator.jar check --engine ENGINE --url URL --context-window TOKENS [options]
               java -jar kvguard-operator.jar check --model-deployment FILE [--role ROLE] --url URL [options]

        Probes one live engine with the operator's own probe and verdict code.
          --model-deployment FILE             judge by a ModelDeployment in a YAML file, as the operator would (its
                                              window, ratio, version rules, advisories and rejection probe);
                                              instead of --engine, --context-window, --min-pool-ratio and
                                              --allow-engine-context-above-pool
          --role ROLE                         which of its roles the engine serves (needed when it has several)
          --engine ENGINE                     %s
          --url URL                           the engine's root, e.g. http://10.0.0.7:30000
          --context-window TOKENS             the context window the service promises its clients
          --min-pool-ratio RATIO              the pool must hold at least window x RATIO (default 1.0)
          --allow-engine-context-above-pool   accept an engine whose own context length exceeds its pool (unsafe)
          --metrics-port PORT                 the port on --url's host where the engine serves its metrics (Triton:
                                              8002), when not on --url's port (default: the spec role's metricsPort)
          --timeout-seconds SECONDS           deadline of the probe, all its requests together, 1-300 (default 5,
                                              or the spec's probe.timeoutSeconds)
          --output text|json                  report format (default text)
          --api-key-file FILE                 send the key this file holds as Authorization: Bearer to the
                                              engine, every request (never a value on the command line: ps shows it)
          --record DIR                        write every request sent, every answer read and the verdict into
                                              DIR, a new or empty directory, API keys redacted (docs/preflight.md)
          --rejection-probe                   also send one prompt per admission path of the engine and require
                                              each check's own refusal (as spec.rejectionProbe does)
          --margin-tokens TOKENS              keys the probe as spec.rejectionProbe.marginTokens does, 1-1048576
                                              (default 1; needs --rejection-probe)
          --model NAME                        the served model name (vllm; needs --rejection-probe)
          --pd-router                         --url is SGLang's prefill/decode router, which adds the bootstrap
                                              fields (sglang; needs --rejection-probe)
          --register-prefill URL              add this prefill server to the proof router at --url for the proof
          --register-decode URL               and this decode server, removed again afterwards; each repeatable,
                                              one of each at least (needs --pd-router; docs/preflight.md)
        Exit codes: 0 verified, 1 refused, 2 probe failed, rejection probe inconclusive, or usage error.
        """
        .formatted(engineNames());
  }
}

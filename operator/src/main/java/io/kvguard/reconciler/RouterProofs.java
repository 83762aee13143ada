package io.kvguard.reconciler;

import io.kvguard.customresource.ModelDeploymentSpec;
import io.kvguard.customresource.RejectionProbeSpec;
import io.kvguard.customresource.RejectionRouterSpec;
import io.kvguard.customresource.RouterProofStatus;
import io.kvguard.probe.EngineEndpoint;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.PoolObservation;
import io.kvguard.verdict.PoolVerdict;
import io.kvguard.verdict.RejectionJudge;
import io.kvguard.verdict.RejectionOutcome;
import io.kvguard.verdict.Verdict;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The proof of a ModelDeployment's prefill and decode pods through its router
 * (spec.rejectionProbe.router; issue 26 §2), as a pass stage: a pure function of the pass's
 * assessments and the proofs this operator holds. One proof covers every prefill and decode pod
 * whose pool passed; it is keyed by the router, marginTokens and each such pod's role, image ID,
 * engine version and engine container ({@link #keyOf}), so a new image, version or pod set proves
 * again. Until then a pod keeps the last passing proof only if that proof named this very pod,
 * role, image, version and container; every other pod waits shut. A proof that did not pass shuts
 * every prefill and decode pod of the policy. Proofs live in memory only: an operator restart
 * proves again, and the pods wait shut meanwhile.
 */
final class RouterProofs {
  private RouterProofs() {}

  /**
   * A prefill or decode pod whose pool passed, as the proof needs it.
   *
   * @param mode the engine's disaggregation mode (prefill or decode)
   * @param imageID the engine container's image ID from the pod's status ("" when not reported)
   * @param version the engine's version as it reported it, or null
   * @param process the engine process's identity (container ID and restart count)
   * @param endpoint where its own engine answers (its /server_info)
   * @param promptTokens the rejection probe's key length for this pod (marginTokens)
   */
  record Member(
      String pod,
      String podUid,
      String mode,
      String imageID,
      String version,
      String process,
      EngineEndpoint endpoint,
      PoolObservation observation,
      long promptTokens) {

    /** What the proof is for, of this pod. */
    String covered() {
      return mode
          + "|"
          + imageID
          + "|"
          + Objects.toString(version, "")
          + "|"
          + podUid
          + "|"
          + process;
    }
  }

  /** A proof that passed: the key it was for and the pods it covered. */
  record Passed(String keyHash, Set<String> covered, Instant at, String message) {}

  /**
   * The proof a pass wants sent.
   *
   * @param registerFor the ModelDeployment (namespace/name) whose pods are added to a proof router
   *     for the proof (spec.rejectionProbe.router.registerWorkers), or empty
   */
  record Request(
      ProbeScheduler.Key key,
      String keyHash,
      List<Member> members,
      String service,
      int port,
      Duration timeout,
      String model,
      long promptTokens,
      Duration retryAfter,
      Instant now,
      Optional<String> registerFor) {
    /**
     * Where the proof is sent: the router's Service over plain HTTP. The engines' bearer token goes
     * along only if every pod is itself probed over plain HTTP: a token the pods are asked for over
     * TLS is not sent in the clear (a router that then wants it answers 401: inconclusive).
     */
    EngineEndpoint routerEndpoint(String host) {
      boolean plain =
          members.stream().allMatch(m -> "http".equals(m.endpoint().baseUri().getScheme()));
      return EngineEndpoint.of("http", host, port, timeout)
          .withBearerToken(
              plain ? members.get(0).endpoint().bearerToken() : java.util.Optional.empty());
    }

    /**
     * A proof that did not fail stands for its key; a failed one is tried again a period later, and
     * so is one not sent because of its Service (fixing the Service does not change the key).
     */
    boolean fresh(ProbeScheduler.Result<RejectionOutcome> result) {
      boolean retried =
          result.outcome() instanceof RejectionOutcome.Failed
              || RouterServices.refusedService(result.outcome());
      return !retried || result.completedAt().plus(retryAfter).isAfter(now);
    }
  }

  /**
   * What the stage concluded: the assessments with the proof's verdicts, the status to show, the
   * proof to send, and how the memory of the last passing proof changes.
   *
   * @param remember a proof that passed now, to keep
   * @param forget the last passing proof no longer counts (a proof for the current pods did not
   *     pass)
   */
  record Outcome(
      List<Assessment.Assessed> assessed,
      RouterProofStatus status,
      Optional<Request> request,
      Optional<Passed> remember,
      boolean forget,
      ProbeScheduler.Key usedKey) {
    static Outcome none(List<Assessment.Assessed> assessed) {
      return new Outcome(assessed, null, Optional.empty(), Optional.empty(), false, null);
    }
  }

  /** Whether the spec proves prefill and decode pods through a router. */
  static boolean active(ModelDeploymentSpec spec) {
    RejectionProbeSpec rejection = spec.effectiveRejectionProbe();
    return rejection.effectiveEnabled() && rejection.getRouter() != null;
  }

  static Outcome apply(
      io.kvguard.customresource.ModelDeployment md,
      String mdUid,
      List<Assessment.Assessed> assessed,
      Assessment.Known known,
      Instant now) {
    ModelDeploymentSpec spec = md.getSpec();
    if (!active(spec)) {
      return Outcome.none(assessed);
    }
    RejectionRouterSpec router = spec.effectiveRejectionProbe().getRouter();
    String where =
        "through router Service "
            + router.getService()
            + " port "
            + router.getPort()
            + " (spec.rejectionProbe.router)";
    List<Member> members =
        assessed.stream()
            .filter(a -> a.routerMember() != null && a.assessment().verdict().verified())
            .map(Assessment.Assessed::routerMember)
            .sorted(java.util.Comparator.comparing(Member::covered))
            .toList();
    if (members.isEmpty()) {
      return Outcome.none(assessed);
    }
    String key = keyOf(router, spec.effectiveRejectionProbe(), spec.getModel(), members);
    String hash = hash(key);
    ProbeScheduler.Key schedulerKey = new ProbeScheduler.Key("router-proof/" + mdUid, key);
    Optional<ProbeScheduler.Result<RejectionOutcome>> result =
        known.routerProof(schedulerKey).filter(r -> r.isFor(hash));
    Set<String> current = members.stream().map(Member::covered).collect(Collectors.toSet());
    RouterProofStatus status = new RouterProofStatus();
    status.key = hash;
    Request request =
        new Request(
            schedulerKey,
            hash,
            members,
            router.getService(),
            router.getPort(),
            Duration.ofSeconds(spec.effectiveRejectionProbe().effectiveTimeoutSeconds()),
            spec.getModel(),
            members.stream().mapToLong(Member::promptTokens).max().orElseThrow(),
            Duration.ofSeconds(spec.effectiveProbe().effectivePeriodSeconds()),
            now,
            router.effectiveRegisterWorkers()
                ? Optional.of(md.getMetadata().getNamespace() + "/" + md.getMetadata().getName())
                : Optional.empty());
    // Sent once no selected pod is still waiting for its first pool probe: otherwise the pods that
    // answer first would be proven, and again with each one that follows.
    long firstProbesPending =
        assessed.stream()
            .filter(
                a ->
                    a.probeKey() != null
                        && a.assessment().observation() == null
                        && a.assessment().verdict().reason() == GateReason.AwaitingProbe)
            .count();
    Optional<Request> wanted =
        (result.isPresent() && request.fresh(result.get()))
                || (result.isEmpty() && firstProbesPending > 0)
            ? Optional.empty()
            : Optional.of(request);
    if (result.isPresent()) {
      RejectionOutcome outcome = result.get().outcome();
      status.time = result.get().completedAt().truncatedTo(ChronoUnit.SECONDS).toString();
      boolean passed = outcome instanceof RejectionOutcome.Refused;
      List<Assessment.Assessed> judged = new ArrayList<>();
      String proofMessage = null;
      for (Assessment.Assessed one : assessed) {
        if (one.routerMember() == null || !one.assessment().verdict().verified()) {
          judged.add(one);
          continue;
        }
        PoolVerdict verdict = RejectionJudge.judge(one.assessment().verdict(), outcome);
        String message =
            passed
                ? verdict.message()
                    + " "
                    + where
                    + ", for "
                    + members.size()
                    + " pods (proof "
                    + hash
                    + ")"
                : where
                    + ", for every prefill and decode pod of this ModelDeployment: "
                    + verdict.message();
        proofMessage =
            proofMessage == null ? proofMessageOf(outcome, where, verdict) : proofMessage;
        judged.add(one.withVerdict(new PoolVerdict(verdict.verdict(), verdict.reason(), message)));
      }
      status.result = passed ? "Passed" : reasonOf(judged, outcome).name();
      status.message = bounded(proofMessage);
      return new Outcome(
          judged,
          status,
          wanted,
          passed
              ? Optional.of(new Passed(hash, current, result.get().completedAt(), status.message))
              : Optional.empty(),
          !passed,
          schedulerKey);
    }
    // Pending: pods the last passing proof covered, unchanged, keep it; every other pod waits.
    Optional<Passed> last = known.passedRouterProof();
    List<Assessment.Assessed> judged = new ArrayList<>();
    for (Assessment.Assessed one : assessed) {
      if (one.routerMember() == null || !one.assessment().verdict().verified()) {
        judged.add(one);
        continue;
      }
      PoolVerdict pool = one.assessment().verdict();
      boolean covered =
          last.isPresent() && last.get().covered().contains(one.routerMember().covered());
      judged.add(
          one.withVerdict(
              covered
                  ? new PoolVerdict(
                      Verdict.Verified,
                      pool.reason(),
                      pool.message()
                          + "; proven "
                          + where
                          + " by proof "
                          + last.get().keyHash()
                          + " for this pod, image, version and container; a proof of the changed"
                          + " prefill/decode pods is pending")
                  : PoolVerdict.awaitingProbe(
                      pool.message()
                          + "; rejection probe "
                          + where
                          + " pending (the prefill and decode pods are proven together, as the"
                          + " router picks a worker per request)")));
    }
    status.result = "Pending";
    status.message =
        bounded(
            (wanted.isPresent()
                    ? "proving "
                    : "waiting for the first pool probe of "
                        + firstProbesPending
                        + " selected pods before proving ")
                + members.size()
                + " prefill/decode pods "
                + where
                + (last.isPresent() ? "; last passing proof " + last.get().keyHash() : ""));
    return new Outcome(judged, status, wanted, Optional.empty(), false, schedulerKey);
  }

  private static GateReason reasonOf(List<Assessment.Assessed> judged, RejectionOutcome outcome) {
    return judged.stream()
        .filter(a -> a.routerMember() != null && !a.assessment().verdict().verified())
        .map(a -> a.assessment().verdict().reason())
        .findFirst()
        .orElse(
            outcome instanceof RejectionOutcome.Answered
                ? GateReason.RejectionPathUnsafe
                : GateReason.RejectionProbeInconclusive);
  }

  private static String proofMessageOf(
      RejectionOutcome outcome, String where, PoolVerdict verdict) {
    if (outcome instanceof RejectionOutcome.Refused refused) {
      return where + ": " + RejectionJudge.refusal(refused);
    }
    return where + ": " + verdict.message();
  }

  /**
   * What the proof is for: the router, how it is asked, and each prefill and decode pod's role,
   * image ID, engine version and engine container. Sorted, so the same pods give the same key.
   */
  static String keyOf(
      RejectionRouterSpec router,
      RejectionProbeSpec rejection,
      String model,
      List<Member> members) {
    Set<String> covered = new TreeSet<>();
    members.forEach(m -> covered.add(m.covered()));
    return "router="
        + router.getService()
        + ":"
        + router.getPort()
        // Only when set, so a router without it keeps the key it had before the field existed.
        + (router.effectiveRegisterWorkers() ? "|registerWorkers" : "")
        + "|margin="
        + rejection.effectiveMarginTokens()
        + "|timeout="
        + rejection.effectiveTimeoutSeconds()
        + "|model="
        + model
        + "|pods="
        + String.join(",", covered);
  }

  static String hash(String key) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private static String bounded(String message) {
    if (message == null || message.length() <= RouterProofStatus.MAX_MESSAGE) {
      return message;
    }
    return message.substring(0, RouterProofStatus.MAX_MESSAGE - 1) + "…";
  }
}

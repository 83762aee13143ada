package io.kvguard.reconciler;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.kvguard.customresource.ModelDeployment;
import io.kvguard.customresource.ModelDeploymentStatus;
import io.kvguard.customresource.PodVerdictStatus;
import io.kvguard.customresource.RoleSpec;
import io.kvguard.customresource.RoleStatus;
import io.kvguard.gate.VerdictRecord;
import io.kvguard.verdict.GateReason;
import io.kvguard.verdict.Verdict;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Builds a ModelDeployment's status from the previous one and this pass's assessments. Pure:
 * timestamps move only where something flipped, so an unchanged cluster gives an identical status
 * and no write.
 *
 * <p>Bounded at any pod count: etcd refuses an object over 1.5 MiB, and one entry per pod (about
 * 500 bytes) reached that at about 3,000 pods, after which no status write succeeded. So the status
 * counts every pod (per role and reason) and lists at most {@value #MAX_LISTED_PODS}, the ones a
 * user must act on first, with the number left out; what a restarted operator needs of each pod is
 * on the pod itself ({@link PodRecords}).
 */
final class StatusFactory {
  static final String READY = "Ready";
  static final String POOLS_VERIFIED = "PoolsVerified";
  static final String INVALID_SPEC = "InvalidSpec";

  /** Pods listed in status.pods; the CRD's maxItems says the same. */
  static final int MAX_LISTED_PODS =
      io.kvguard.customresource.ModelDeploymentStatus.MAX_LISTED_PODS;

  /** A message or note longer than this is cut, so one entry cannot outgrow the bound. */
  static final int MAX_TEXT = 1024;

  /** Notes kept per listed pod. */
  static final int MAX_NOTES = 8;

  /** Pods named in the ConflictingPolicies part of a condition message. */
  static final int MAX_CONFLICTS_NAMED = 3;

  private StatusFactory() {}

  /**
   * One entry per assessed pod, by name: what the pass concluded and the figures behind it. The
   * status lists a bounded part of these; events and logs see them all.
   */
  static List<PodVerdictStatus> entries(
      List<PodAssessment> assessments, Map<String, VerdictRecord> before, Instant now) {
    List<PodAssessment> sorted = new ArrayList<>(assessments);
    sorted.sort(Comparator.comparing(PodAssessment::podName));
    List<PodVerdictStatus> entries = new ArrayList<>(sorted.size());
    for (PodAssessment assessment : sorted) {
      entries.add(podEntry(assessment, before.get(assessment.podName()), now));
    }
    return entries;
  }

  /** {@link PodVerdictStatus#gating} of a pod whose spec lacks the readiness gate. */
  static final String LABEL_ONLY = "LabelOnly";

  /** Label-only pods a role's note names; the rest are counted. */
  static final int LABEL_ONLY_NAMED = 10;

  /**
   * Which pods of a role only the routing label holds back, and the fix (issue 18 §1):
   * readinessGates cannot change on an existing pod, so only a new pod can carry the gate.
   */
  static Optional<String> labelOnlyNote(List<PodVerdictStatus> ofRole) {
    List<String> names =
        ofRole.stream().filter(e -> LABEL_ONLY.equals(e.gating)).map(e -> e.name).sorted().toList();
    if (names.isEmpty()) {
      return Optional.empty();
    }
    String named =
        String.join(", ", names.subList(0, Math.min(names.size(), LABEL_ONLY_NAMED)))
            + (names.size() > LABEL_ONLY_NAMED
                ? " and " + (names.size() - LABEL_ONLY_NAMED) + " more"
                : "");
    return Optional.of(
        "LabelOnly: "
            + names.size()
            + " pod"
            + (names.size() == 1 ? "" : "s")
            + " without the"
            + " kvguard.io/pool-verified readiness gate, held back by the kvguard.io/verified label only ("
            + named
            + "); a rollout restart of their owner recreates them with the gate where the webhook is on (namespace"
            + " label kvguard.io/readiness-gate-injection=enabled)");
  }

  static ModelDeploymentStatus build(
      ModelDeployment md,
      List<PodVerdictStatus> entries,
      Map<String, List<String>> roleNotes,
      Optional<String> invalidSpec,
      List<String> conflicts,
      Instant now) {
    ModelDeploymentStatus previous =
        md.getStatus() == null ? new ModelDeploymentStatus() : md.getStatus();
    String stamp = now.truncatedTo(ChronoUnit.SECONDS).toString();
    long generation =
        md.getMetadata().getGeneration() == null ? 0 : md.getMetadata().getGeneration();

    ModelDeploymentStatus status = new ModelDeploymentStatus();
    status.observedGeneration = generation;
    status.pods = listed(entries);
    if (entries.size() > status.pods.size()) {
      status.podsNotListed = entries.size() - status.pods.size();
    }

    int selected = 0;
    int verified = 0;
    List<String> shortRoles = new ArrayList<>();
    boolean noPods = true;
    List<RoleSpec> roles =
        md.getSpec() == null || md.getSpec().getRoles() == null
            ? List.of()
            : md.getSpec().getRoles();
    for (RoleSpec role : roles) {
      RoleStatus entry = new RoleStatus();
      entry.name = role.getName();
      entry.minReadyPods = role.effectiveMinReadyPods();
      List<PodVerdictStatus> ofRole =
          entries.stream().filter(e -> role.getName().equals(e.role)).toList();
      entry.selected = ofRole.size();
      entry.verified = (int) ofRole.stream().filter(StatusFactory::verified).count();
      // An upper bound of a pool is no measured pool: it is not the role's smallest.
      entry.smallestPoolTokens =
          ofRole.stream()
              .filter(e -> e.poolTokens != null && e.poolSource == null)
              .mapToLong(e -> e.poolTokens)
              .min()
              .stream()
              .boxed()
              .findFirst()
              .orElse(null);
      if (!ofRole.isEmpty()) {
        entry.podsByReason = new TreeMap<>();
        for (PodVerdictStatus pod : ofRole) {
          entry.podsByReason.merge(pod.reason, 1, Integer::sum);
        }
      }
      entry.notes.addAll(roleNotes.getOrDefault(role.getName(), List.of()));
      labelOnlyNote(ofRole).ifPresent(entry.notes::add);
      status.roles.add(entry);
      selected += entry.selected;
      verified += entry.verified;
      noPods &= entry.selected == 0;
      if (entry.verified < entry.minReadyPods) {
        shortRoles.add(
            "role "
                + role.getName()
                + ": "
                + entry.verified
                + "/"
                + entry.selected
                + " verified, needs "
                + entry.minReadyPods);
      }
    }
    status.verified = verified + "/" + selected;
    int labelOnly = (int) entries.stream().filter(e -> LABEL_ONLY.equals(e.gating)).count();
    status.labelOnlyPods = labelOnly == 0 ? null : labelOnly;

    List<Condition> conditions = new ArrayList<>();
    if (invalidSpec.isPresent()) {
      String why = cut(invalidSpec.get());
      conditions.add(condition(previous, READY, false, "InvalidSpec", why, generation, stamp));
      conditions.add(
          condition(previous, POOLS_VERIFIED, false, "InvalidSpec", why, generation, stamp));
      conditions.add(
          condition(previous, INVALID_SPEC, true, "InvalidSpec", why, generation, stamp));
      status.conditions = conditions;
      return status;
    }
    String conflictSuffix = conflicts.isEmpty() ? "" : "; ConflictingPolicies: " + named(conflicts);
    if (shortRoles.isEmpty()) {
      conditions.add(
          condition(
              previous,
              READY,
              true,
              "MinReadyPodsVerified",
              "every role has its minimum of verified pods (" + status.verified + " pods verified)",
              generation,
              stamp));
    } else if (noPods) {
      conditions.add(
          condition(
              previous,
              READY,
              false,
              "NoPods",
              "no role's selector matches any pod",
              generation,
              stamp));
    } else {
      conditions.add(
          condition(
              previous,
              READY,
              false,
              "NotEnoughVerifiedPods",
              String.join("; ", shortRoles),
              generation,
              stamp));
    }
    if (selected == 0) {
      conditions.add(
          condition(
              previous,
              POOLS_VERIFIED,
              false,
              "NoPods",
              "no pod is selected" + conflictSuffix,
              generation,
              stamp));
    } else if (verified == selected) {
      conditions.add(
          condition(
              previous,
              POOLS_VERIFIED,
              true,
              "AllPodsVerified",
              "all " + selected + " selected pods verified" + conflictSuffix,
              generation,
              stamp));
    } else {
      conditions.add(
          condition(
              previous,
              POOLS_VERIFIED,
              false,
              "PodsNotVerified",
              (selected - verified)
                  + " of "
                  + selected
                  + " selected pods not verified"
                  + firstProblem(entries)
                  + conflictSuffix,
              generation,
              stamp));
    }
    conditions.add(
        condition(
            previous,
            INVALID_SPEC,
            false,
            "SpecValid",
            "the spec can be applied",
            generation,
            stamp));
    status.conditions = conditions;
    return status;
  }

  /**
   * The entries the status lists: every pod while they fit; beyond that the most pressing first
   * (refused, then failed, then awaiting a probe, then verified label-only, then verified with the
   * gate; by name within each), listed by name.
   */
  private static List<PodVerdictStatus> listed(List<PodVerdictStatus> entries) {
    if (entries.size() <= MAX_LISTED_PODS) {
      return new ArrayList<>(entries);
    }
    List<PodVerdictStatus> chosen =
        entries.stream()
            .sorted(Comparator.comparingInt(StatusFactory::urgency).thenComparing(e -> e.name))
            .limit(MAX_LISTED_PODS)
            .sorted(Comparator.comparing(e -> e.name))
            .toList();
    return new ArrayList<>(chosen);
  }

  /**
   * Lower lists first. A refused or failed pod has its gate shut for a cause the user must see
   * first. A pod awaiting a probe follows: its gate is shut until the probe answers. Then verified
   * pods that carry no readiness gate (label-only): nothing but the routing label holds them back,
   * and only the user can fix that (a rollout restart, issue 18), so they stay named however many
   * verified pods with the gate there are. Those, the healthy rest, fill what is left. Label-only
   * pods that are refused, failed or awaiting sort with their kind (their gating field says which);
   * in a fleet where every pod is label-only (no injection there) the order is the one before.
   */
  private static int urgency(PodVerdictStatus entry) {
    if (Verdict.Refused.name().equals(entry.verdict)) {
      return 0;
    }
    boolean awaitingProbe = GateReason.AwaitingProbe.name().equals(entry.reason);
    if (!verified(entry) && !awaitingProbe) {
      return 1;
    }
    if (awaitingProbe) {
      return 2;
    }
    return LABEL_ONLY.equals(entry.gating) ? 3 : 4;
  }

  private static boolean verified(PodVerdictStatus entry) {
    return Verdict.Verified.name().equals(entry.verdict);
  }

  private static String named(List<String> conflicts) {
    if (conflicts.size() <= MAX_CONFLICTS_NAMED) {
      return String.join("; ", conflicts);
    }
    return String.join("; ", conflicts.subList(0, MAX_CONFLICTS_NAMED))
        + "; and "
        + (conflicts.size() - MAX_CONFLICTS_NAMED)
        + " more pods";
  }

  private static String firstProblem(List<PodVerdictStatus> entries) {
    return entries.stream()
        .filter(e -> !verified(e))
        .findFirst()
        .map(e -> ", e.g. " + e.name + ": " + e.reason + " (" + e.message + ")")
        .orElse("");
  }

  private static PodVerdictStatus podEntry(
      PodAssessment assessment, VerdictRecord before, Instant now) {
    VerdictRecord record = PodRecords.of(assessment, before, now);
    PodVerdictStatus entry = new PodVerdictStatus();
    entry.name = assessment.podName();
    entry.role = record.role();
    entry.verdict = record.verdict();
    entry.reason = record.reason();
    entry.message = cut(assessment.verdict().message());
    entry.poolTokens = record.poolTokens();
    entry.poolSource = record.poolSource();
    entry.engineContextTokens = record.engineContextTokens();
    entry.engineVersion = record.engineVersion();
    entry.disaggregationMode = record.disaggregationMode();
    // containerID records which process the verdict is about; it is only meaningful once judged.
    entry.containerID = record.containerID();
    entry.restartCount = record.restartCount();
    entry.gating = assessment.labelOnly() ? LABEL_ONLY : "ReadinessGate";
    // Only a refusal this container gave (or one recorded for it and this very prompt) is written
    // down, with the
    // status and error class the engine really answered.
    entry.rejectionRefusedBy = record.rejectionRefusedBy();
    entry.rejectionPromptTokens = record.rejectionPromptTokens();
    entry.rejectionRefusalStatus = record.rejectionRefusalStatus();
    entry.rejectionRefusalError = record.rejectionRefusalError();
    assessment.notes().stream().limit(MAX_NOTES).map(StatusFactory::cut).forEach(entry.notes::add);
    entry.lastTransitionTime = record.lastTransitionTime();
    return entry;
  }

  private static String cut(String text) {
    return text == null || text.length() <= MAX_TEXT
        ? text
        : text.substring(0, MAX_TEXT - 3) + "...";
  }

  private static Condition condition(
      ModelDeploymentStatus previous,
      String type,
      boolean value,
      String reason,
      String message,
      long generation,
      String stamp) {
    String status = value ? "True" : "False";
    Optional<Condition> before =
        previous.conditions == null
            ? Optional.empty()
            : previous.conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    String transition =
        before
            .filter(c -> status.equals(c.getStatus()) && c.getLastTransitionTime() != null)
            .map(Condition::getLastTransitionTime)
            .orElse(stamp);
    return new ConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withReason(reason)
        .withMessage(cut(message))
        .withObservedGeneration(generation)
        .withLastTransitionTime(transition)
        .build();
  }
}
